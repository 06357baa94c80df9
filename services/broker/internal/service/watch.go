package service

import (
	"context"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/rpcerr"
	brokerv1 "fris.dev/proto/broker/v1"
)

// MaxWatchers bounds the open WatchReplies calls of one replica: each holds
// a goroutine and re-reads the store every WatchInterval.
const MaxWatchers = 10000

// notifier wakes the watchers of an inquiry when this replica stores a
// reply to it. Replies stored by another replica are found by the
// watchers' periodic re-read instead.
type notifier struct {
	mu    sync.Mutex
	n     int
	byInq map[string]map[chan struct{}]struct{}
}

// subscribe returns a channel that receives (without blocking the writer:
// a wake-up pending is enough) after each reply to id, and its cancel.
func (w *notifier) subscribe(id string) (<-chan struct{}, func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n >= MaxWatchers {
		return nil, nil, rpcerr.New(rpcerr.ErrTooLarge, "too many open watches on this broker; try again later")
	}
	if w.byInq == nil {
		w.byInq = map[string]map[chan struct{}]struct{}{}
	}
	ch := make(chan struct{}, 1)
	set := w.byInq[id]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		w.byInq[id] = set
	}
	set[ch] = struct{}{}
	w.n++
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := set[ch]; !ok {
			return
		}
		delete(set, ch)
		w.n--
		if len(set) == 0 {
			delete(w.byInq, id)
		}
	}, nil
}

// notify wakes every watcher of id.
func (w *notifier) notify(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.byInq[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// WatchReplies calls send with the replies of an inquiry of author (any,
// when author is "") as a researcher sees them (ResearcherReplies), then again whenever they change, until ctx ends or
// send fails. A change is noticed at once when this replica stored it, and
// within WatchInterval when another one did.
func (s *Service) WatchReplies(ctx context.Context, id, author string, send func(*brokerv1.ListRepliesResponse) error) error {
	if err := checkID("inquiry", id); err != nil {
		return err
	}
	// Subscribed before the first read, so no reply falls between them.
	wake, cancel, err := s.watchers.subscribe(id)
	if err != nil {
		return err
	}
	defer cancel()
	every := s.cfg.WatchInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last *brokerv1.ListRepliesResponse
	for {
		res, err := s.ResearcherReplies(ctx, id, author)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if last == nil || !proto.Equal(last, res) {
			if err := send(res); err != nil {
				return err
			}
			last = res
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.cfg.Done:
			return nil
		case <-wake:
		case <-tick.C:
		}
	}
}
