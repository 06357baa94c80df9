package explorer

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	ratelimitv1 "fris.dev/proto/ratelimit/v1"
)

// The throttles view: the accounts, clients, site credentials and
// addresses the services' abuse limits slow now (pkg/ratelimit), with the
// counts and until when, and "lift" per entry, which forgets what the
// limit counted so the holder can sign in at once. Through each service's
// ThrottleAdmin API with the operator's identity (auth, upload and broker
// admit the gateway to ListThrottles and LiftThrottle for an operator's
// token, not a user administrator's; docs/security.md); each lift is
// audited by the service, with the operator as the actor.
const (
	ThrottlesPath     = OperatorPath + "throttles"
	ThrottleLiftPath  = ThrottlesPath + "/lift"
	maxThrottleIDForm = 64
)

// ThrottleService is one service's ThrottleAdmin API.
type ThrottleService struct {
	Name   string
	Client ratelimitv1.ThrottleAdminClient
}

func (a *App) throttleRoutes() []route {
	return []route{
		{pattern: "GET " + ThrottlesPath, access: operator, page: a.throttles},
		{pattern: "POST " + ThrottleLiftPath, access: operator, page: a.liftThrottle},
	}
}

// throttleLine is a throttle as the view lists it.
type throttleLine struct {
	Service, ID   string
	Flow, Kind    string
	Account, Addr string
	// FlowText and KindText say which limit it is, in words.
	FlowText, KindText string
	Failures           int64
	Refused            int64
	Until              when
	// Left is how long it still holds, in words.
	Left string
}

type throttlesData struct {
	Throttles []throttleLine
	// Failed are the services that did not answer, with the reason.
	Failed       []string
	ServicesText string
	Done         string
}

func (a *App) throttleService(name string) *ThrottleService {
	for i := range a.cfg.Throttles {
		if a.cfg.Throttles[i].Name == name {
			return &a.cfg.Throttles[i]
		}
	}
	return nil
}

func (a *App) throttles(q *req) error {
	if len(a.cfg.Throttles) == 0 {
		return fail(http.StatusServiceUnavailable, "op.throttles.error.none")
	}
	v := a.opView(q, "op.throttles.title", "throttles")
	var d throttlesData
	names := make([]string, 0, len(a.cfg.Throttles))
	for _, s := range a.cfg.Throttles {
		names = append(names, s.Name)
	}
	d.ServicesText = strings.Join(names, ", ")
	// Every service at once: a slow one delays the page by itself only.
	answers := make([]*ratelimitv1.ListThrottlesResponse, len(a.cfg.Throttles))
	errs := make([]error, len(a.cfg.Throttles))
	var wg sync.WaitGroup
	for i, s := range a.cfg.Throttles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = s.Client.ListThrottles(q.ctx, &ratelimitv1.ListThrottlesRequest{})
		}()
	}
	wg.Wait()
	now := a.cfg.Now()
	listed := map[string]bool{}
	for i, s := range a.cfg.Throttles {
		if errs[i] != nil {
			a.cfg.Log.WarnContext(q.ctx, "explorer: throttles", "service", s.Name, "err", errs[i])
			d.Failed = append(d.Failed, s.Name+": "+status.Convert(errs[i]).Message())
			continue
		}
		for _, t := range answers[i].GetThrottles() {
			until := t.GetUntil().AsTime()
			if !until.After(now) {
				continue
			}
			listed[s.Name+" "+t.GetId()] = true
			d.Throttles = append(d.Throttles, throttleLine{Service: s.Name, ID: t.GetId(), Flow: t.GetFlow(), Kind: t.GetKind(),
				FlowText: wordsOr(v, "op.throttles.flow."+t.GetFlow(), t.GetFlow()), KindText: wordsOr(v, "op.throttles.kind."+t.GetKind(), t.GetKind()),
				Account: t.GetAccount(), Addr: t.GetAddr(), Failures: t.GetFailures(), Refused: t.GetRefused(),
				Until: a.when(t.GetUntil()), Left: left(v, until.Sub(now))})
		}
	}
	// The longest-running first, as each service lists them.
	sort.SliceStable(d.Throttles, func(i, j int) bool { return d.Throttles[i].Until.ISO > d.Throttles[j].Until.ISO })
	// The status line of a lift just done, only where the list and the
	// key's own name bear it out: the link's parameters are anyone's to
	// write.
	qv := q.r.URL.Query()
	svc, id, account, addr := qv.Get("service"), qv.Get("id"), qv.Get("account"), qv.Get("addr")
	gone := a.throttleService(svc) != nil && throttleID.MatchString(id) && !listed[svc+" "+id]
	switch qv.Get("done") {
	case "ended":
		if gone {
			d.Done = v.T("op.throttles.done.ended")
		}
	case "lifted":
		if gone && account == "" && addr == "" {
			// A key that held state but no listing (it was not yet
			// refusing): nothing names it.
			d.Done = v.T("op.throttles.done.liftedkey")
		} else if gone && namesKey(id, account, addr) {
			who := account
			if who == "" {
				who = addr
			} else if addr != "" {
				who = v.T("op.throttles.from", account, addr)
			}
			d.Done = v.T("op.throttles.done.lifted", who)
		}
	}
	v.Data = d
	a.render(q, http.StatusOK, "operator-throttles", v)
	return nil
}

// wordsOr is key's text, or raw when there is none (a flow a newer
// service added).
func wordsOr(v *view, key, raw string) string {
	if s := v.T(key); s != key {
		return s
	}
	return raw
}

// left is a wait in words: seconds under two minutes, then minutes, then
// hours.
func left(v *view, d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return v.T("op.throttles.left.s", int64(max(d.Round(time.Second)/time.Second, 1)))
	case d < 2*time.Hour:
		return v.T("op.throttles.left.m", int64(d.Round(time.Minute)/time.Minute))
	}
	return v.T("op.throttles.left.h", int64(d.Round(time.Hour)/time.Hour))
}

// throttleID is the form of a throttle's id (pkg/ratelimit): the flow,
// the kind, the first 12 bytes of the SHA-256 of what it limits.
var throttleID = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}:(pa|ad|ce|ac):([0-9a-f]{24})$`)

// namesKey reports whether id is the key of account and addr: its hash is
// of "account\x00addr" (pa), the address (ad) or the account (ce, ac).
func namesKey(id, account, addr string) bool {
	m := throttleID.FindStringSubmatch(id)
	if m == nil {
		return false
	}
	var of string
	switch m[1] {
	case "pa":
		of = account + "\x00" + addr
	case "ad":
		of = addr
	default:
		of = account
	}
	sum := sha256.Sum256([]byte(of))
	return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:12])), []byte(m[2])) == 1
}

// liftThrottle forgets what one service's limit counted against a key.
func (a *App) liftThrottle(q *req) error {
	if !sameOrigin(q.r) {
		return fail(http.StatusForbidden, "error.crosssite")
	}
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, 16<<10)
	if err := q.r.ParseForm(); err != nil {
		return formError(err)
	}
	if subtle.ConstantTimeCompare([]byte(q.r.PostForm.Get(CSRFField)), []byte(q.sess.CSRF)) != 1 {
		return fail(http.StatusForbidden, "error.csrf")
	}
	if len(a.cfg.Throttles) == 0 {
		return fail(http.StatusServiceUnavailable, "op.throttles.error.none")
	}
	s := a.throttleService(q.r.PostForm.Get("service"))
	id := q.r.PostForm.Get("id")
	if s == nil || id == "" || len(id) > maxThrottleIDForm {
		return fail(http.StatusBadRequest, "op.throttles.error.form")
	}
	res, err := s.Client.LiftThrottle(q.ctx, &ratelimitv1.LiftThrottleRequest{Id: id})
	if err != nil {
		return a.actionFailed(err)
	}
	back := url.Values{"done": {"lifted"}, "service": {s.Name}, "id": {id}}
	if t := res.GetThrottle(); t != nil {
		back.Set("account", t.GetAccount())
		back.Set("addr", t.GetAddr())
	}
	if !res.GetLifted() {
		back = url.Values{"done": {"ended"}, "service": {s.Name}, "id": {id}}
	}
	http.Redirect(q.w, q.r, ThrottlesPath+"?"+back.Encode(), http.StatusSeeOther)
	return nil
}
