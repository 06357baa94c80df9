package explorer

import "fris.dev/gateway/internal/i18n"

// inquiryStepMessages are the texts of the inquiry pages' confirmations,
// limits, expose download, reasons for refusals and the sites' polling;
// they join messages when the package loads.
var inquiryStepMessages = i18n.Catalogue{
	"inq.confirm.release":     {i18n.English: "Yes, release it: the sites' banks start reading it", i18n.German: "Ja, freigeben: Die Biobanken der Standorte beginnen, sie zu lesen"},
	"inq.confirm.close":       {i18n.English: "Yes, close it: no site sees it or answers afterwards", i18n.German: "Ja, schließen: Danach sieht und beantwortet sie kein Standort mehr"},
	"inq.confirm.empty":       {i18n.English: "Release it without a condition all the same", i18n.German: "Trotzdem ohne Bedingung freigeben"},
	"inq.empty.warning":       {i18n.English: "This inquiry has no condition: released, it asks every target site for all of its donors. Add conditions with \"Edit inquiry\", or confirm below that this is what you mean.", i18n.German: "Diese Anfrage hat keine Bedingung: Freigegeben fragt sie jeden Zielstandort nach allen seinen Spendern. Fügen Sie mit „Anfrage bearbeiten“ Bedingungen hinzu, oder bestätigen Sie unten, dass Sie genau das wollen."},
	"inq.err.confirm.release": {i18n.English: "Not released: tick \"Yes, release it\" next to the button first.", i18n.German: "Nicht freigegeben: Kreuzen Sie zuerst „Ja, freigeben“ neben der Schaltfläche an."},
	"inq.err.confirm.close":   {i18n.English: "Not closed: tick \"Yes, close it\" next to the button first.", i18n.German: "Nicht geschlossen: Kreuzen Sie zuerst „Ja, schließen“ neben der Schaltfläche an."},
	"inq.err.confirm.empty":   {i18n.English: "Not released: this inquiry has no condition. Tick \"Release it without a condition all the same\" if that is what you mean.", i18n.German: "Nicht freigegeben: Diese Anfrage hat keine Bedingung. Kreuzen Sie „Trotzdem ohne Bedingung freigeben“ an, wenn Sie das wollen."},

	"inq.expose.download": {i18n.English: "Download %s", i18n.German: "%s herunterladen"},
	"inq.reach.title":     {i18n.English: "Reaching the sites", i18n.German: "Erreichte Standorte"},
	"inq.reach.seen":      {i18n.English: "%d of %d target sites have fetched the inquiry.", i18n.German: "%d von %d Zielstandorten haben die Anfrage abgerufen."},
	"inq.reach.wait":      {i18n.English: "A site that polled recently fetches it at its next poll; one that has not polled for a long time may be offline: ask its operator.", i18n.German: "Ein Standort, der kürzlich nachgefragt hat, ruft sie bei der nächsten Nachfrage ab; einer, der lange nicht nachgefragt hat, ist vielleicht nicht erreichbar: Fragen Sie seinen Betreiber."},
	"inq.reach.caption":   {i18n.English: "When each site's bank last asked for inquiries, and when it fetched this one", i18n.German: "Wann die Biobank jedes Standorts zuletzt nach Anfragen gefragt und wann sie diese abgerufen hat"},
	"inq.reach.poll":      {i18n.English: "Last asked for inquiries", i18n.German: "Zuletzt nach Anfragen gefragt"},
	"inq.reach.fetched":   {i18n.English: "Fetched this inquiry", i18n.German: "Diese Anfrage abgerufen"},
	"inq.reach.never":     {i18n.English: "never yet", i18n.German: "noch nie"},
	"inq.reach.notyet":    {i18n.English: "not yet", i18n.German: "noch nicht"},
	"inq.reach.hint":      {i18n.English: "Times to within ten seconds. A site answers after fetching the inquiry and running it, which may take minutes, or longer where staff approve each answer.", i18n.German: "Zeiten auf zehn Sekunden genau. Ein Standort antwortet, nachdem er die Anfrage abgerufen und ausgeführt hat; das kann Minuten dauern, oder länger, wo Mitarbeitende jede Antwort freigeben."},

	"inq.err.chars": {i18n.English: "%s: at most %d characters (this one has %d).", i18n.German: "%s: höchstens %d Zeichen (dieser Text hat %d)."},
	"inq.err.bytes": {i18n.English: "%s: too long. Some letters, such as ä, é or emoji, take more room than others; with them it holds fewer than %d characters. Shorten it a little.", i18n.German: "%s: zu lang. Manche Zeichen wie ä, é oder Emoji brauchen mehr Platz als andere; mit ihnen passen weniger als %d Zeichen hinein. Kürzen Sie den Text etwas."},

	"inq.err.role":          {i18n.English: "Inquiries are for researchers: your account lacks the researcher role (scope %s). Ask an operator of this FRIS to grant it to your account; you can use the registry's pages meanwhile.", i18n.German: "Anfragen sind für Forschende: Ihrem Konto fehlt die Forschendenrolle (Scope %s). Bitten Sie einen Betreiber dieses FRIS, sie Ihrem Konto zu geben; die Seiten des Registers können Sie derweil nutzen."},
	"error.hint.forbidden":  {i18n.English: "If you need this, ask an operator of this FRIS: operators grant the roles an account has. Sign out and in again once they have.", i18n.German: "Wenn Sie dies brauchen, fragen Sie einen Betreiber dieses FRIS: Betreiber vergeben die Rollen eines Kontos. Melden Sie sich danach ab und wieder an."},
	"error.hint.badrequest": {i18n.English: "Go back to the page you came from, reload it and try again. If it fails again, tell an operator what you did.", i18n.German: "Gehen Sie zurück zur vorigen Seite, laden Sie sie neu und versuchen Sie es erneut. Scheitert es wieder, sagen Sie einem Betreiber, was Sie getan haben."},
	"error.hint.form":       {i18n.English: "Go back to the form, correct what the message names and send it again.", i18n.German: "Gehen Sie zurück zum Formular, korrigieren Sie, was die Meldung nennt, und senden Sie es erneut."},
	"error.hint.crosssite":  {i18n.English: "Open the page on this site itself (not from a link or page of another site), and send the form from there.", i18n.German: "Öffnen Sie die Seite auf dieser Website selbst (nicht über einen Link oder eine Seite einer anderen Website) und senden Sie das Formular von dort."},
	"inq.total.draft":       {i18n.English: "not released yet", i18n.German: "noch nicht freigegeben"},
	"inq.total.page":        {i18n.English: "see the inquiry", i18n.German: "siehe die Anfrage"},
}

func init() {
	for k, v := range inquiryStepMessages {
		if _, dup := messages[k]; dup {
			panic("explorer: message " + k + " is in both catalogues")
		}
		messages[k] = v
	}
}
