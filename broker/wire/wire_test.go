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

func TestReplyTravelsOnTheRequestsConnection(t *testing.T) {
	e := Encoder{Connection: 3}
	req := kmsg.NewPtrFetchRequest()
	req.Version = 4
	r := e.Request(9, req)
	if r.Connection != 3 {
		t.Fatalf("request connection %d, want the encoder's 3", r.Connection)
	}
	var responder Encoder // another node, first life
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 4
	if a := responder.Reply(r, resp); a.CorrelationID != 9 || a.Connection != 3 {
		t.Fatalf("reply correlation %d connection %d, want 9 and 3", a.CorrelationID, a.Connection)
	}
}
