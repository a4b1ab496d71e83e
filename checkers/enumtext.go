// enumtext.go: the enumerations of histories and verdicts spelled as words
// in JSON (history files, reports), as their String methods spell them.

package checkers

import (
	"fmt"
	"strings"
)

// parseEnum finds the value in [lo, hi] whose String is text.
func parseEnum[E interface {
	~uint8
	String() string
}](what string, text []byte, lo, hi E) (E, error) {
	var names []string
	for e := lo; e <= hi; e++ {
		if e.String() == string(text) {
			return e, nil
		}
		names = append(names, e.String())
	}
	return 0, fmt.Errorf("%s %q: want one of %s", what, text, strings.Join(names, ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) (err error) {
	*k, err = parseEnum("kind", b, Send, ShareLeave)
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) (err error) {
	*o, err = parseEnum("outcome", b, Pending, Info)
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (r Result) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Result) UnmarshalText(b []byte) (err error) {
	*r, err = parseEnum("result", b, ResultOK, ResultUnknown)
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Role) UnmarshalText(b []byte) (err error) {
	*r, err = parseEnum("role", b, NoRole, Follower)
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (k FailureKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *FailureKind) UnmarshalText(b []byte) (err error) {
	*k, err = parseEnum("failure", b, Crash, DiskWiped)
	return err
}
