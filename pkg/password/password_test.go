package password

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var fast = Params{Time: 1, Memory: 1024, Threads: 1}

func TestHashAndCheck(t *testing.T) {
	h := New(fast, 0)
	enc, err := h.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("encoding = %s", enc)
	}
	enc2, _ := h.Hash("correct horse")
	if enc == enc2 {
		t.Fatal("no salt: equal hashes for equal secrets")
	}
	if err := h.Check(enc, "correct horse"); err != nil {
		t.Fatal(err)
	}
	if err := h.Check(enc, "correct horsE"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong secret = %v", err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA", "$argon2id$v=19$m=1024,t=1,p=1$!!$AA"} {
		if err := h.Check(bad, "x"); err == nil || errors.Is(err, ErrMismatch) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCacheRemembersOnlySuccess(t *testing.T) {
	h := New(Default, time.Minute)
	enc, _ := h.Hash("s3cret-s3cret")
	start := time.Now()
	if err := h.Check(enc, "s3cret-s3cret"); err != nil {
		t.Fatal(err)
	}
	slow := time.Since(start)
	start = time.Now()
	for i := 0; i < 100; i++ {
		if err := h.Check(enc, "s3cret-s3cret"); err != nil {
			t.Fatal(err)
		}
	}
	if cached := time.Since(start) / 100; cached*20 > slow {
		t.Fatalf("cached check %v not much faster than a hash %v", cached, slow)
	}
	if err := h.Check(enc, "wrong"); !errors.Is(err, ErrMismatch) {
		t.Fatal("cache confused a wrong secret with the right one")
	}
}
