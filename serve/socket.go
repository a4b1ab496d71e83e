package serve

// This file is the socket layer: one TCP listener per simulated broker,
// and per accepted connection a reader goroutine that cuts the byte stream
// into frames and a writer goroutine that writes the world's answers.
// None of it touches the world: readers and the accept loops put inputs
// on the inbox, stamped with their wall-clock arrival, and the world's
// goroutine (the live pacer) takes them from there; answers come back
// through each socket's queue. Nothing a client sends can stop the server:
// a malformed frame closes that connection only.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// socket is one accepted connection.
type socket struct {
	srv    *Server
	nc     net.Conn
	broker int32
	num    int // set by the world when it accepts the connection

	mu      sync.Mutex
	queue   [][]byte
	closing bool
	wake    chan struct{}
}

// listen opens the brokers' listeners: broker i on port+i, or each on a
// port of its own when port is 0.
func listen(host string, port, brokers int) ([]net.Listener, error) {
	var ls []net.Listener
	for i := 0; i < brokers; i++ {
		p := 0
		if port != 0 {
			p = port + i
		}
		addr := net.JoinHostPort(host, fmt.Sprint(p))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, o := range ls {
				o.Close()
			}
			return nil, fmt.Errorf("listen on %s for b%d: %v", addr, i, err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// acceptLoop accepts connections to broker until the listener closes.
func (s *Server) acceptLoop(l net.Listener, broker int32) {
	for {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		sock := &socket{srv: s, nc: nc, broker: broker, wake: make(chan struct{}, 1)}
		if !s.send(input{TapeEntry: TapeEntry{Kind: kindAccept, Broker: broker}, wall: time.Now(), sock: sock}) {
			nc.Close()
			return
		}
	}
}

// send puts an input on the inbox unless the server is done.
func (s *Server) send(in input) bool {
	select {
	case s.inbox <- in:
		return true
	case <-s.done:
		return false
	}
}

// start registers the socket under its number and, if the world kept the
// connection open, starts its reader and writer.
func (sk *socket) start(open bool) {
	sk.srv.mu.Lock()
	sk.srv.sockets[sk.num] = sk
	sk.srv.mu.Unlock()
	go sk.writeLoop()
	if open {
		go sk.readLoop()
	}
}

func (sk *socket) readLoop() {
	r := bufio.NewReaderSize(sk.nc, 64*1024)
	for {
		frame, err := ReadFrame(r)
		if err != nil {
			why := "the client closed it"
			if err != io.EOF && !isClosed(err) && !errors.Is(err, syscall.ECONNRESET) {
				why = err.Error()
				sk.srv.logf("conn%d (to b%d): %v: closing the connection", sk.num, sk.broker, err)
			}
			sk.srv.send(input{TapeEntry: TapeEntry{Kind: kindClose, Conn: sk.num}, wall: time.Now(), why: why})
			return
		}
		if !sk.srv.send(input{TapeEntry: TapeEntry{Kind: kindFrame, Conn: sk.num, Frame: frame}, wall: time.Now()}) {
			return
		}
	}
}

// push queues a frame for the writer, or (frame nil) closes the socket
// once what is queued is written.
func (sk *socket) push(frame []byte) {
	sk.mu.Lock()
	if frame == nil {
		sk.closing = true
	} else if !sk.closing {
		sk.queue = append(sk.queue, frame)
	}
	sk.mu.Unlock()
	select {
	case sk.wake <- struct{}{}:
	default:
	}
}

func (sk *socket) writeLoop() {
	defer sk.nc.Close()
	for {
		sk.mu.Lock()
		q, closing := sk.queue, sk.closing
		sk.queue = nil
		sk.mu.Unlock()
		for _, f := range q {
			if _, err := sk.nc.Write(f); err != nil {
				return // the reader sees the broken connection too
			}
		}
		if closing {
			return
		}
		select {
		case <-sk.wake:
		case <-sk.srv.done:
			return
		}
	}
}

func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
