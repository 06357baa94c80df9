// Adding a passkey on the account page (passkeys.go). The add form
// carries the session's CSRF token and the name: posted to its begin path
// it gets the registration's options; the authenticator's new credential
// goes back with the same form. Without WebAuthn the form stays hidden and
// the page says what is needed.
(function () {
  "use strict";
  var form = document.getElementById("pk-add");
  if (!form || !window.PublicKeyCredential || !navigator.credentials) {
    return;
  }
  var note = document.getElementById("pk-unsupported");
  var status = document.getElementById("pk-status");
  var button = form.querySelector("button[type=submit]");
  form.hidden = false;
  if (note) {
    note.hidden = true;
  }

  // WebAuthn's binary fields travel as base64url.
  function bytes(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) {
      s += "=";
    }
    return Uint8Array.from(atob(s), function (c) { return c.charCodeAt(0); });
  }
  function b64url(buf) {
    var s = "";
    new Uint8Array(buf).forEach(function (b) { s += String.fromCharCode(b); });
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function fail() {
    status.textContent = form.dataset.failed;
    status.hidden = false;
    button.disabled = false;
  }

  form.addEventListener("submit", async function (ev) {
    if (form.elements.credential.value) {
      return; // the answer is in: the form goes to the server
    }
    ev.preventDefault();
    button.disabled = true;
    status.hidden = true;
    try {
      var res = await fetch(form.dataset.begin, {method: "POST", credentials: "same-origin",
        body: new URLSearchParams({csrf_token: form.elements.csrf_token.value})});
      if (!res.ok) {
        fail();
        return;
      }
      var begun = await res.json();
      var pk = begun.options.publicKey;
      pk.challenge = bytes(pk.challenge);
      pk.user.id = bytes(pk.user.id);
      (pk.excludeCredentials || []).forEach(function (c) { c.id = bytes(c.id); });
      var cred = await navigator.credentials.create({publicKey: pk});
      var r = cred.response;
      form.elements.ceremony.value = begun.ceremony;
      form.elements.credential.value = JSON.stringify({
        id: cred.id, rawId: b64url(cred.rawId), type: cred.type,
        authenticatorAttachment: cred.authenticatorAttachment || null,
        clientExtensionResults: cred.getClientExtensionResults(),
        response: {
          clientDataJSON: b64url(r.clientDataJSON), attestationObject: b64url(r.attestationObject),
          transports: r.getTransports ? r.getTransports() : []
        }
      });
      form.submit();
    } catch (e) {
      fail();
    }
  });
})();
