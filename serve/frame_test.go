package serve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFrameRoundTrip: what AppendRequest writes, ReadFrame, ParseHeader
// and ParseBody read back, flexible header versions included.
func TestFrameRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 4, 7, 9, 12} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		topic := "t"
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
		frame := AppendRequest(nil, 42, "my-client", req)
		got, err := ReadFrame(bytes.NewReader(frame))
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		h, body, err := ParseHeader(got)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if h != (Header{Key: 3, Version: v, Correlation: 42, ClientID: "my-client"}) {
			t.Fatalf("v%d: header %+v", v, h)
		}
		back, err := ParseBody(h, body)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if diff := cmp.Diff(req, back, cmpopts.IgnoreUnexported(kmsg.MetadataRequest{}, kmsg.MetadataRequestTopic{}, kmsg.Tags{})); diff != "" {
			t.Fatalf("v%d: %s", v, diff)
		}
	}
}

func TestFrameRejects(t *testing.T) {
	size := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	for name, in := range map[string][]byte{
		"negative size": size(-1),
		"too large":     size(MaxFrame + 1),
		"too small":     append(size(3), 1, 2, 3),
		"cut short":     append(size(20), 1, 2, 3),
	} {
		if _, err := ReadFrame(bytes.NewReader(in)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	if _, _, err := ParseHeader([]byte{0, 3, 0, 7, 0, 0, 0, 1, 0x7f, 0x7f}); err == nil {
		t.Error("a client id longer than the frame was accepted")
	}
	if _, err := ParseBody(Header{Key: 999}, nil); err == nil {
		t.Error("api key 999 was decoded")
	}
	if _, err := ParseBody(Header{Key: 3, Version: 99}, nil); err == nil {
		t.Error("Metadata v99 was decoded")
	}
}

// FuzzFrame: no input panics the frame reader, the decoders or the
// history's record reader, and a
// frame that decodes re-encodes to a frame that decodes the same.
func FuzzFrame(f *testing.F) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	f.Add(AppendRequest(nil, 1, "c", req))
	f.Add(AppendRequest(nil, 7, "", produceReq("t", 0, -1, "a", "b")))
	f.Add(AppendRequest(nil, 9, "x", fetchReq("t", 1, 3)))
	f.Add([]byte{0, 0, 0, 10, 0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		for {
			frame, err := ReadFrame(r)
			if err != nil {
				return
			}
			h, body, err := ParseHeader(frame)
			if err != nil {
				continue
			}
			req, err := ParseBody(h, body)
			if err != nil {
				continue
			}
			if p, ok := req.(*kmsg.ProduceRequest); ok {
				for _, t := range p.Topics {
					for _, pp := range t.Partitions {
						eachRecord(pp.Records, func(*kmsg.RecordBatch, *kmsg.Record) {}) // the history's reader
					}
				}
			}
			again := AppendRequest(nil, h.Correlation, h.ClientID, req)
			frame2, err := ReadFrame(bytes.NewReader(again))
			if err != nil {
				t.Fatalf("re-encoded frame unreadable: %v", err)
			}
			h2, body2, err := ParseHeader(frame2)
			if err != nil || h2 != h {
				t.Fatalf("re-encoded header %+v (%v), was %+v", h2, err, h)
			}
			if _, err := ParseBody(h2, body2); err != nil {
				t.Fatalf("re-encoded %s v%d does not decode: %v", apiName(h.Key), h.Version, err)
			}
		}
	})
}
