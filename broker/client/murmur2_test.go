package client

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"pgregory.net/rapid"
)

// naiveMurmur2 is a straightforward transcription of Kafka's Utils.murmur2
// in Java's signed int arithmetic (int64 masked to 32 bits, >>> as an
// unsigned shift), written independently of Murmur2 to cross-check it.
func naiveMurmur2(data []byte) int32 {
	const seed, m, r = int64(-1756908916), int64(0x5bd1e995), 24 // 0x9747b28c as a Java int
	toInt := func(x int64) int64 { return int64(int32(uint32(x))) }
	ushr := func(x int64, n uint) int64 { return int64(uint32(x) >> n) }
	length := len(data)
	h := toInt(seed ^ int64(length))
	for i := 0; i < length/4; i++ {
		k := int64(int32(binary.LittleEndian.Uint32(data[i*4:])))
		k = toInt(k * m)
		k ^= ushr(k, r)
		k = toInt(k * m)
		h = toInt(h * m)
		h = toInt(h ^ k)
	}
	rest := length % 4
	base := length &^ 3
	if rest >= 3 {
		h = toInt(h ^ int64(data[base+2])<<16)
	}
	if rest >= 2 {
		h = toInt(h ^ int64(data[base+1])<<8)
	}
	if rest >= 1 {
		h = toInt(h ^ int64(data[base]))
		h = toInt(h * m)
	}
	h ^= ushr(h, 13)
	h = toInt(h * m)
	h ^= ushr(h, 15)
	return int32(h)
}

// TestMurmur2KafkaVectors checks the values Kafka's own UtilsTest.testMurmur2
// pins [code: clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java].
func TestMurmur2KafkaVectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	} {
		if got := Murmur2([]byte(c.in)); got != c.want {
			t.Errorf("Murmur2(%q) = %d, want %d (Kafka UtilsTest)", c.in, got, c.want)
		}
	}
}

// TestMurmur2EveryLength pins the hash of inputs of every length 0..16 —
// every tail case (length%4 = 0..3) with 0 to 4 full blocks, in ASCII and
// with bytes >= 0x80 (sign extension is where ports go wrong). The values
// were computed by a separate Python port of Utils.murmur2 that reproduces
// the six UtilsTest vectors above [derived].
func TestMurmur2EveryLength(t *testing.T) {
	ascii := []int32{275646681, 971027396, 383146478, 2046760236, 1245199770, -691983482, 1172273898,
		1465064253, -1594634784, -35604804, -631703640, -1328444005, -747774932, 1933918953,
		-1338951265, 1792992660, 1438427052}
	high := []int32{275646681, 857690492, 1324703833, -1331970346, 909933343, 682152002, 117864157,
		-182655246, 124963729, 1953617044, -1327601602, -1091038818, -188842569, 1801067814,
		-749944950, -2040109461, 901377787}
	src := []byte("0123456789abcdef")
	hb, _ := hex.DecodeString("80878e959ca3aab1b8bfc6cdd4dbe2e9")
	for n := 0; n <= 16; n++ {
		if got := Murmur2(src[:n]); got != ascii[n] {
			t.Errorf("Murmur2(%q) = %d, want %d", src[:n], got, ascii[n])
		}
		if got := Murmur2(hb[:n]); got != high[n] {
			t.Errorf("Murmur2(%x) = %d, want %d", hb[:n], got, high[n])
		}
		for _, in := range [][]byte{src[:n], hb[:n]} {
			if got, want := Murmur2(in), naiveMurmur2(in); got != want {
				t.Errorf("Murmur2(%x) = %d, naive transcription says %d", in, got, want)
			}
		}
	}
}

// TestMurmur2MatchesNaive is a property test: Murmur2 agrees with the
// naive transcription on arbitrary byte strings.
func TestMurmur2MatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		data := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "data")
		if got, want := Murmur2(data), naiveMurmur2(data); got != want {
			t.Fatalf("Murmur2(%x) = %d, naive %d", data, got, want)
		}
	})
}

// TestPartitionForKeyUsesToPositive checks the key partitioner against
// toPositive(murmur2(key)) % n — the sign bit masked, not Math.abs — for
// every length 0..16 and several partition counts.
func TestPartitionForKeyUsesToPositive(t *testing.T) {
	src := []byte("0123456789abcdef")
	sawNegative := false
	for n := 0; n <= 16; n++ {
		h := naiveMurmur2(src[:n])
		for _, parts := range []int{1, 3, 7, 10, 50} {
			want := int((int64(h) & 0x7fffffff) % int64(parts))
			if got := PartitionForKey(src[:n], parts); got != want {
				t.Errorf("PartitionForKey(%q, %d) = %d, want %d", src[:n], parts, got, want)
			}
			if h < 0 {
				sawNegative = true
			}
		}
	}
	if !sawNegative {
		t.Fatal("no negative hash among the inputs: toPositive is untested")
	}
	// "foobar" hashes to -790332482: toPositive gives 1357151166, and
	// 1357151166 % 3 = 0, while Math.abs would give 790332482 % 3 = 2.
	if got := PartitionForKey([]byte("foobar"), 3); got != 0 {
		t.Fatalf("PartitionForKey(foobar, 3) = %d, want 0 (toPositive, not abs)", got)
	}
}
