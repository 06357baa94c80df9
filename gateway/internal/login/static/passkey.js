// Signing in with a passkey on the login page (passkey.go). The page's
// form carries the authorization request and the CSRF token: posted to
// the begin path it gets the ceremony's options; the authenticator's
// answer goes back with the same form, which ends as a password sign-in.
// Without WebAuthn the button stays hidden and the form works as before.
(function () {
  "use strict";
  var box = document.getElementById("passkey");
  if (!box || !window.PublicKeyCredential || !navigator.credentials) {
    return;
  }
  var form = document.querySelector("main form[method=post]");
  var button = document.getElementById("passkey-signin");
  var error = document.getElementById("passkey-error");
  box.hidden = false;

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
    error.textContent = box.dataset.failed;
    error.hidden = false;
    button.disabled = false;
  }

  button.addEventListener("click", async function () {
    button.disabled = true;
    error.hidden = true;
    try {
      var res = await fetch(box.dataset.begin, {method: "POST", credentials: "same-origin",
        body: new URLSearchParams(new FormData(form))});
      if (!res.ok) {
        fail();
        return;
      }
      var begun = await res.json();
      var pk = begun.options.publicKey;
      pk.challenge = bytes(pk.challenge);
      (pk.allowCredentials || []).forEach(function (c) { c.id = bytes(c.id); });
      var cred = await navigator.credentials.get({publicKey: pk});
      var r = cred.response;
      form.elements.passkey_ceremony.value = begun.ceremony;
      form.elements.passkey_credential.value = JSON.stringify({
        id: cred.id, rawId: b64url(cred.rawId), type: cred.type,
        authenticatorAttachment: cred.authenticatorAttachment || null,
        clientExtensionResults: cred.getClientExtensionResults(),
        response: {
          clientDataJSON: b64url(r.clientDataJSON), authenticatorData: b64url(r.authenticatorData),
          signature: b64url(r.signature), userHandle: r.userHandle ? b64url(r.userHandle) : null
        }
      });
      form.submit();
    } catch (e) {
      fail();
    }
  });
})();
