package metadata

// This file holds the primitive encodings of Kafka's flexible message
// versions (KIP-482), as the generated *Record.write / read methods use
// them: big-endian fixed-width integers, unsigned varints, compact
// (length+1) strings and arrays where 0 means null, 16-byte UUIDs, and the
// tagged-field section (count, then tag, size, bytes for each field).
// Source: apache/kafka clients/src/main/java/org/apache/kafka/common/protocol
// (Writable, Readable, ByteUtils) and the generator's MessageDataGenerator.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort is returned when a record ends before its fields do.
var errShort = errors.New("metadata: record truncated")

type writer struct{ b []byte }

func (w *writer) int8(v int8)      { w.b = append(w.b, byte(v)) }
func (w *writer) bool(v bool)      { w.int8(boolByte(v)) }
func (w *writer) int16(v int16)    { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) uint16(v uint16)  { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *writer) int32(v int32)    { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64)    { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) uuid(v [16]byte)  { w.b = append(w.b, v[:]...) }

// str writes a compact string.
func (w *writer) str(s string) {
	w.uvarint(uint64(len(s)) + 1)
	w.b = append(w.b, s...)
}

// nullableStr writes a compact nullable string; nil is null.
func (w *writer) nullableStr(s *string) {
	if s == nil {
		w.uvarint(0)
		return
	}
	w.str(*s)
}

// int32s writes a compact array of int32; a nil slice is written as empty
// (use nullableInt32s where the schema allows null).
func (w *writer) int32s(v []int32) {
	w.uvarint(uint64(len(v)) + 1)
	for _, x := range v {
		w.int32(x)
	}
}

// nullableInt32s writes a compact nullable array of int32; nil is null.
func (w *writer) nullableInt32s(v []int32) {
	if v == nil {
		w.uvarint(0)
		return
	}
	w.int32s(v)
}

// uuids writes a compact array of UUIDs.
func (w *writer) uuids(v [][16]byte) {
	w.uvarint(uint64(len(v)) + 1)
	for _, x := range v {
		w.uuid(x)
	}
}

func (w *writer) nullableUUIDs(v [][16]byte) {
	if v == nil {
		w.uvarint(0)
		return
	}
	w.uuids(v)
}

// taggedField is one entry of a tagged-field section.
type taggedField struct {
	tag  uint64
	body []byte
}

// tagged writes the tagged-field section: fields must be in tag order.
func (w *writer) tagged(fs ...taggedField) {
	w.uvarint(uint64(len(fs)))
	for _, f := range fs {
		w.uvarint(f.tag)
		w.uvarint(uint64(len(f.body)))
		w.b = append(w.b, f.body...)
	}
}

// field encodes one tagged field's body with fn.
func field(tag uint64, fn func(w *writer)) taggedField {
	var w writer
	fn(&w)
	return taggedField{tag: tag, body: w.b}
}

func boolByte(v bool) int8 {
	if v {
		return 1
	}
	return 0
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = errShort
		r.b = nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int8() int8 {
	v := r.take(1)
	if v == nil {
		return 0
	}
	return int8(v[0])
}

func (r *reader) bool() bool { return r.int8() != 0 }

func (r *reader) int16() int16 {
	v := r.take(2)
	if v == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(v))
}

func (r *reader) uint16() uint16 { return uint16(r.int16()) }

func (r *reader) int32() int32 {
	v := r.take(4)
	if v == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(v))
}

func (r *reader) int64() int64 {
	v := r.take(8)
	if v == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("metadata: bad unsigned varint")
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uuid() (u [16]byte) {
	copy(u[:], r.take(16))
	return u
}

// length reads a compact length: -1 for null.
func (r *reader) length() int {
	n := r.uvarint()
	if n > uint64(len(r.b))+1 {
		if r.err == nil {
			r.err = errShort
		}
		return -1
	}
	return int(n) - 1
}

func (r *reader) str() string {
	n := r.length()
	if n < 0 {
		if r.err == nil {
			r.err = errors.New("metadata: null string in a non-nullable field")
		}
		return ""
	}
	return string(r.take(n))
}

func (r *reader) nullableStr() *string {
	n := r.length()
	if n < 0 {
		return nil
	}
	s := string(r.take(n))
	return &s
}

func (r *reader) nullableInt32s() []int32 {
	n := r.length()
	if n < 0 {
		return nil
	}
	v := make([]int32, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		v = append(v, r.int32())
	}
	return v
}

func (r *reader) int32s() []int32 {
	v := r.nullableInt32s()
	if v == nil && r.err == nil {
		r.err = errors.New("metadata: null array in a non-nullable field")
	}
	return v
}

func (r *reader) nullableUUIDs() [][16]byte {
	n := r.length()
	if n < 0 {
		return nil
	}
	v := make([][16]byte, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		v = append(v, r.uuid())
	}
	return v
}

func (r *reader) uuids() [][16]byte {
	v := r.nullableUUIDs()
	if v == nil && r.err == nil {
		r.err = errors.New("metadata: null array in a non-nullable field")
	}
	return v
}

// tagged reads a tagged-field section, calling fn with a reader over each
// field's body; unknown tags are skipped, as Kafka does.
func (r *reader) tagged(fn func(tag uint64, fr *reader)) {
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		tag := r.uvarint()
		size := r.uvarint()
		if size > uint64(len(r.b)) {
			r.err = errShort
			return
		}
		body := r.take(int(size))
		fr := &reader{b: body}
		fn(tag, fr)
		if fr.err != nil {
			r.err = fr.err
		}
	}
}
