// Package wire is the message vocabulary of the simulated cluster: Kafka's
// own request and response types (github.com/twmb/franz-go/pkg/kmsg,
// generated from Kafka's message definitions) wrapped as sim.Messages.
//
// A request and its response travel as *Request and *Response values on the
// virtual network. Their size on the wire is the length of Kafka's encoding
// of the body at its version (plus the 4-byte length prefix and the request
// header's correlation id), so the network's byte counters report what a
// real cluster would send. Bodies are immutable once wrapped: the sender
// must not touch them afterwards, and the receiver must not change them.
//
// Connections: a request carries the incarnation of the process that sent
// it (Connection) and its response echoes it, so the requester can drop an
// answer written to a connection of its previous life. In Kafka a
// restarted process opens new sockets and the old ones are gone: a response
// to a request sent before a crash can never reach the new process, whose
// correlation ids start again from the same values (NetworkClient matches a
// response only against the requests in flight on its own connection).
//
// Simplification: the body is measured (encoded, or its length computed:
// size.go), but not encoded for the receiver, nor decoded
// on the other side; the Go value is handed over as it is. That keeps the
// simulation fast while every message sent is still valid Kafka.
package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// Request is a Kafka request in flight.
type Request struct {
	// CorrelationID pairs the response with the request, as in Kafka's
	// request header.
	CorrelationID int32
	// Connection identifies the connection the request travels on: the
	// incarnation of the requesting process (sim.Context.Incarnation).
	Connection uint32
	// Body is the request, e.g. *kmsg.FetchRequest.
	Body kmsg.Request
	// ControllerListener marks a request sent to a node's controller
	// listener (controller.listener.names), as kafka-topics.sh
	// --bootstrap-controller does: a KRaft node with the controller role
	// answers it itself (NOT_CONTROLLER when its controller is inactive).
	// False is the broker listener, where clients connect: a broker
	// forwards controller APIs to the active controller (KIP-590). It is
	// not part of the encoding.
	ControllerListener bool
	size               int
	kind               string
}

// Response is a Kafka response in flight.
type Response struct {
	CorrelationID int32
	// Connection is the request's Connection: a response travels back on
	// the connection its request came on.
	Connection uint32
	Body       kmsg.Response
	size       int
	kind       string
}

// headerBytes approximates the request/response header: length prefix,
// api key, version, correlation id and an empty client id.
const headerBytes = 4 + 2 + 2 + 4 + 2

// kindNames holds "<Api>Request" and "<Api>Response" per api key. It is
// filled once at package init and only read afterwards, so worlds running
// in parallel can share it.
var kindNames = func() (n [128][2]string) {
	for k := range n {
		base := kmsg.NameForKey(int16(k))
		n[k] = [2]string{base + "Request", base + "Response"}
	}
	return n
}()

func names(key int16) [2]string {
	if key >= 0 && int(key) < len(kindNames) {
		return kindNames[key]
	}
	return [2]string{"UnknownRequest", "UnknownResponse"}
}

// NewRequest wraps body, which must have its version set.
func NewRequest(correlationID int32, body kmsg.Request) *Request {
	var e Encoder
	return e.Request(correlationID, body)
}

// NewResponse wraps body, which must have its version set.
func NewResponse(correlationID int32, body kmsg.Response) *Response {
	var e Encoder
	return e.Response(correlationID, body)
}

// Encoder wraps messages reusing one scratch buffer to measure them. A node
// keeps one (it is not safe for use by two worlds at once).
type Encoder struct {
	// Connection is stamped on every request the encoder wraps: a node sets
	// it to its incarnation when it starts.
	Connection uint32
	buf        []byte
}

func (e *Encoder) measure(m interface{ AppendTo([]byte) []byte }) int {
	if n, ok := encodedSize(m); ok {
		return n
	}
	e.buf = m.AppendTo(e.buf[:0])
	return len(e.buf)
}

// Request wraps body, which must have its version set.
func (e *Encoder) Request(correlationID int32, body kmsg.Request) *Request {
	return e.RequestIn(new(Request), correlationID, body)
}

// RequestIn is Request wrapping body in r, which the caller allocated (in
// one block with the body, say) and returns: once sent, r is immutable
// like the body.
func (e *Encoder) RequestIn(r *Request, correlationID int32, body kmsg.Request) *Request {
	*r = Request{CorrelationID: correlationID, Connection: e.Connection, Body: body, size: headerBytes + e.measure(body), kind: names(body.Key())[0]}
	return r
}

// Response wraps body, which must have its version set.
func (e *Encoder) Response(correlationID int32, body kmsg.Response) *Response {
	return e.responseIn(new(Response), correlationID, body)
}

func (e *Encoder) responseIn(r *Response, correlationID int32, body kmsg.Response) *Response {
	*r = Response{CorrelationID: correlationID, Body: body, size: 4 + 4 + e.measure(body), kind: names(body.Key())[1]}
	return r
}

// Reply wraps body, which must have its version set, as the response to
// req: same correlation id, same connection.
func (e *Encoder) Reply(req *Request, body kmsg.Response) *Response {
	return e.ReplyIn(new(Response), req, body)
}

// ReplyIn is Reply wrapping body in r, which the caller allocated and
// returns (see RequestIn).
func (e *Encoder) ReplyIn(r *Response, req *Request, body kmsg.Response) *Response {
	e.responseIn(r, req.CorrelationID, body)
	r.Connection = req.Connection
	return r
}

// Kind implements sim.Message: Kafka's API name, e.g. "FetchRequest".
func (r *Request) Kind() string { return r.kind }

// Size implements sim.Message.
func (r *Request) Size() int { return r.size }

// Kind implements sim.Message: Kafka's API name, e.g. "FetchResponse".
func (r *Response) Kind() string { return r.kind }

// Size implements sim.Message.
func (r *Response) Size() int { return r.size }
