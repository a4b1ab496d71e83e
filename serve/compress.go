package serve

// This file turns the compressed record batches a real client produces
// into uncompressed ones before they enter the simulation.
//
// Simplification: a compressed batch (gzip, snappy, lz4 or zstd, as
// compression.type allows) is decompressed here and rebuilt with the codec
// bits cleared and its CRC-32C recomputed; offsets, timestamps, producer
// id, epoch and sequence are the client's. A Kafka broker keeps the
// client's compression (compression.type=producer); what a consumer
// fetches here is the same records, uncompressed. NB: the simulated log
// now stores compressed batches and applies the topic's compression.type
// (broker/storage/compression.go, broker/server/topic_config.go), so this
// edge step could let them through; it is kept until serve's tests cover
// compressed batches end to end.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxDecompressed bounds what one batch may decompress to, so that a
// client cannot exhaust the server's memory with a small frame.
const maxDecompressed = 4 * MaxFrame

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decompressProduce replaces every compressed batch of a Produce request
// by its uncompressed form. It changes req in place (the caller owns it).
func decompressProduce(req *kmsg.ProduceRequest) error {
	for ti := range req.Topics {
		t := &req.Topics[ti]
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			out, err := decompressBatches(p.Records)
			if err != nil {
				return fmt.Errorf("produce to %s-%d: %v", t.Topic, p.Partition, err)
			}
			p.Records = out
		}
	}
	return nil
}

// decompressBatches returns records with every compressed v2 batch
// rebuilt uncompressed; records without one is returned as it is.
func decompressBatches(records []byte) ([]byte, error) {
	var out []byte
	changed := false
	for rest := records; len(rest) > 0; {
		if len(rest) < 61 {
			return nil, fmt.Errorf("record batch of %d bytes: a v2 batch header is 61", len(rest))
		}
		n := int(int32(binary.BigEndian.Uint32(rest[8:]))) + 12
		if n < 61 || n > len(rest) {
			return nil, fmt.Errorf("record batch length %d with %d bytes left", n-12, len(rest))
		}
		batch := rest[:n]
		rest = rest[n:]
		codec := binary.BigEndian.Uint16(batch[21:]) & 0x07
		if batch[16] != 2 || codec == 0 {
			out = append(out, batch...)
			continue
		}
		plain, err := decompress(codec, batch[61:])
		if err != nil {
			return nil, err
		}
		changed = true
		start := len(out)
		out = append(out, batch[:61]...)
		out = append(out, plain...)
		b := out[start:]
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		binary.BigEndian.PutUint16(b[21:], binary.BigEndian.Uint16(b[21:])&^0x07)
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	}
	if !changed {
		return records, nil
	}
	return out, nil
}

// xerialMagic starts snappy data in the Java client's framing
// (snappy-java's SnappyOutputStream): magic, two version ints, then
// chunks of a 4-byte length and a raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func decompress(codec uint16, data []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %v", err)
		}
		r = zr
	case 2:
		return unsnappy(data)
	case 3:
		r = lz4.NewReader(bytes.NewReader(data))
	case 4:
		zr, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed))
		if err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("compression codec %d: allowed 0 (none), 1 (gzip), 2 (snappy), 3 (lz4), 4 (zstd)", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressed+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", codecName(codec), err)
	}
	if len(out) > maxDecompressed {
		return nil, fmt.Errorf("%s: a batch decompresses to more than %d bytes", codecName(codec), maxDecompressed)
	}
	return out, nil
}

func unsnappy(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		return snappyBlock(data)
	}
	if len(data) < 16 {
		return nil, errors.New("snappy: xerial header cut short")
	}
	var out []byte
	for rest := data[16:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("snappy: xerial chunk length cut short")
		}
		n := binary.BigEndian.Uint32(rest)
		if int64(n) > int64(len(rest)-4) {
			return nil, fmt.Errorf("snappy: xerial chunk of %d bytes with %d left", n, len(rest)-4)
		}
		block, err := snappyBlock(rest[4 : 4+n])
		if err != nil {
			return nil, err
		}
		if out = append(out, block...); len(out) > maxDecompressed {
			return nil, fmt.Errorf("snappy: a batch decompresses to more than %d bytes", maxDecompressed)
		}
		rest = rest[4+n:]
	}
	return out, nil
}

func snappyBlock(b []byte) ([]byte, error) {
	n, err := s2.DecodedLen(b)
	if err != nil {
		return nil, fmt.Errorf("snappy: %v", err)
	}
	if n > maxDecompressed {
		return nil, fmt.Errorf("snappy: a block decompresses to %d bytes, more than %d", n, maxDecompressed)
	}
	out, err := s2.Decode(nil, b)
	if err != nil {
		return nil, fmt.Errorf("snappy: %v", err)
	}
	return out, nil
}

func codecName(c uint16) string {
	return [...]string{"none", "gzip", "snappy", "lz4", "zstd"}[c]
}
