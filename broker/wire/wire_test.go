package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestKindAndSize(t *testing.T) {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 4
	req.ReplicaID = 1
	r := NewRequest(7, req)
	if r.Kind() != "FetchRequest" {
		t.Fatalf("kind %q", r.Kind())
	}
	if want := headerBytes + len(req.AppendTo(nil)); r.Size() != want || r.Size() <= headerBytes {
		t.Fatalf("size %d, want %d", r.Size(), want)
	}
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	if k := NewResponse(7, resp).Kind(); k != "OffsetForLeaderEpochResponse" {
		t.Fatalf("kind %q", k)
	}
}
