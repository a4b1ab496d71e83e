package serve

// This file reads and writes Kafka's wire framing: a 4-byte big-endian
// size, then the request header (api key, api version, correlation id,
// client id, and the tagged fields of header v2 when the request's
// version is flexible), then the body, which franz-go's kmsg decodes.
// Responses carry header v0 (the correlation id) or v1 (plus empty tagged
// fields) when flexible — except ApiVersions, whose response header is
// always v0 so a client can read it before it knows the broker's versions
// (KIP-511).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MaxFrame is Kafka's socket.request.max.bytes default: a larger frame is
// refused and its connection closed, as Kafka's SocketServer does.
const MaxFrame = 100 * 1024 * 1024

// Header is a request's header.
type Header struct {
	Key         int16
	Version     int16
	Correlation int32
	ClientID    string
}

// ReadFrame reads one size-prefixed frame. A size below the shortest
// header or above MaxFrame is an error (the connection is then closed).
func ReadFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 8 || n > MaxFrame {
		return nil, fmt.Errorf("frame size %d: allowed 8 to %d bytes", n, MaxFrame)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return frame, nil
}

// ParseHeader reads a request frame's header and returns it with the rest
// of the frame (the body). The version is not checked here: a request of
// an api key kmsg does not know, or at a version it cannot decode, is
// reported by ParseBody.
func ParseHeader(frame []byte) (Header, []byte, error) {
	if len(frame) < 10 {
		return Header{}, nil, fmt.Errorf("request header: %d bytes, want at least 10", len(frame))
	}
	h := Header{
		Key:         int16(binary.BigEndian.Uint16(frame[0:])),
		Version:     int16(binary.BigEndian.Uint16(frame[2:])),
		Correlation: int32(binary.BigEndian.Uint32(frame[4:])),
	}
	rest := frame[8:]
	idLen := int16(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	switch {
	case idLen == -1:
	case idLen < 0 || int(idLen) > len(rest):
		return h, nil, fmt.Errorf("request header: client id length %d with %d bytes left", idLen, len(rest))
	default:
		h.ClientID, rest = string(rest[:idLen]), rest[idLen:]
	}
	if req := kmsg.RequestForKey(h.Key); req != nil && h.Version >= 0 {
		req.SetVersion(h.Version)
		if req.IsFlexible() {
			b := kbin.Reader{Src: rest}
			for n := b.Uvarint(); n > 0 && b.Ok(); n-- {
				b.Uvarint()              // tag
				b.Span(int(b.Uvarint())) // value
			}
			if err := b.Complete(); err != nil && !b.Ok() {
				return h, nil, fmt.Errorf("request header: tagged fields: %v", err)
			}
			rest = b.Src
		}
	}
	return h, rest, nil
}

// ParseBody decodes a request body at the header's version.
func ParseBody(h Header, body []byte) (kmsg.Request, error) {
	req := kmsg.RequestForKey(h.Key)
	if req == nil {
		return nil, fmt.Errorf("api key %d: not a Kafka API", h.Key)
	}
	if h.Version < 0 || h.Version > req.MaxVersion() {
		return nil, fmt.Errorf("%s v%d: kmsg decodes v0 to v%d", kmsg.NameForKey(h.Key), h.Version, req.MaxVersion())
	}
	req.SetVersion(h.Version)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("%s v%d: %v", kmsg.NameForKey(h.Key), h.Version, err)
	}
	return req, nil
}

// AppendResponse appends resp, framed, as the answer to a request with
// header h: size, correlation id, empty tagged fields when the response
// is flexible (not for ApiVersions), body at resp's version.
func AppendResponse(dst []byte, h Header, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Correlation))
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// AppendRequest appends req, framed, with header v1 or v2: what a client
// writes (the tests' and the replay's own encoder).
func AppendRequest(dst []byte, correlation int32, clientID string, req kmsg.Request) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlation))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(clientID)))
	dst = append(dst, clientID...)
	if req.IsFlexible() {
		dst = append(dst, 0)
	}
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
