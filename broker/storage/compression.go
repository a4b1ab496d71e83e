package storage

// This file compresses and decompresses the records of a v2 batch, in the
// formats Kafka's clients and brokers write (the attributes' codec bits,
// DefaultRecordBatch.compressionType):
//
//	1 gzip    a gzip stream (GZIPOutputStream)
//	2 snappy  snappy-java's xerial framing: an 8-byte magic, two version
//	          ints, then chunks of a 4-byte length and a raw snappy block
//	          (SnappyOutputStream, 32 KiB of input per chunk)
//	3 lz4     an LZ4 frame with 64 KiB blocks (KafkaLZ4BlockOutputStream)
//	4 zstd    a zstd frame
//
// What is compressed is the records section: everything after the 61-byte
// header; the header, its record count and its CRC (over the compressed
// bytes) stay as for an uncompressed batch.
//
// Simplifications vs Kafka: default levels only (no compression.*.level,
// KIP-390); the codecs run with one goroutine-free worker, so output is a
// pure function of the input (gzip writes no modification time).

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The compression codecs of the attributes' low 3 bits.
const (
	CodecNone   int16 = 0
	CodecGzip   int16 = 1
	CodecSnappy int16 = 2
	CodecLZ4    int16 = 3
	CodecZstd   int16 = 4
)

// maxDecompressed bounds what one batch's records may decompress to.
const maxDecompressed = 64 << 20

// xerialMagic starts snappy-java's framing.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialChunk = 32 << 10

// CodecName names a codec as compression.type does.
func CodecName(c int16) string {
	if c >= 0 && c <= CodecZstd {
		return [...]string{"none", "gzip", "snappy", "lz4", "zstd"}[c]
	}
	return fmt.Sprintf("codec %d", c)
}

// compress returns raw compressed with codec.
func compress(codec int16, raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch codec {
	case CodecGzip:
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(raw); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CodecSnappy:
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1}) // version 1, compatible with 1
		for rest := raw; len(rest) > 0; {
			n := min(len(rest), xerialChunk)
			block := s2.EncodeSnappy(nil, rest[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
			buf.Write(block)
			rest = rest[n:]
		}
	case CodecLZ4:
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ConcurrencyOption(1)); err != nil {
			return nil, err
		}
		if _, err := w.Write(raw); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CodecZstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		out := enc.EncodeAll(raw, nil)
		return out, enc.Close()
	default:
		return nil, fmt.Errorf("storage: compression codec %d: allowed 1 (gzip), 2 (snappy), 3 (lz4), 4 (zstd)", codec)
	}
	return buf.Bytes(), nil
}

// Decompress returns data decompressed with codec (CodecGzip ...
// CodecZstd), refusing more than 64 MiB of output (a decompression bomb).
func Decompress(codec int16, data []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case CodecGzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	case CodecSnappy:
		return unsnappy(data)
	case CodecLZ4:
		r = lz4.NewReader(bytes.NewReader(data))
	case CodecZstd:
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer dec.Close()
		out, err := dec.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("compression codec %d: allowed 0 (none), 1 (gzip), 2 (snappy), 3 (lz4), 4 (zstd)", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressed+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CodecName(codec), err)
	}
	if len(out) > maxDecompressed {
		return nil, fmt.Errorf("%s: a batch decompresses to more than %d bytes", CodecName(codec), maxDecompressed)
	}
	return out, nil
}

// unsnappy reads xerial framing, or a raw snappy block without it.
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
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if n > maxDecompressed {
		return nil, fmt.Errorf("snappy: a block decompresses to %d bytes, more than %d", n, maxDecompressed)
	}
	out, err := s2.Decode(nil, b)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return out, nil
}
