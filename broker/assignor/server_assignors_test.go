package assignor

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var kafkaTestTopicIDs = map[string]string{
	"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe",
	"topic3": "T3-CU8fVTLCz5YMkLoDQsa", "topic4": "T4-Tw9fVTLCz5HbPp6YQsa",
}

type serverCase struct {
	name, assignor string
	hetero         bool
	topics         []ServerTopic
	members        []ServerMember
	expect         map[string]string // member -> rendered assignment
	none, err      bool
}

func parseTPList(s, sep string) ([]TopicPartition, error) {
	var out []TopicPartition
	for _, part := range strings.Split(s, sep) {
		if part == "" {
			continue
		}
		t, ps, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("%q: want topic:p,p", part)
		}
		for _, p := range strings.Split(ps, ",") {
			n, err := strconv.Atoi(p)
			if err != nil {
				return nil, err
			}
			out = append(out, TopicPartition{t, int32(n)})
		}
	}
	return out, nil
}

// render writes an assignment as the test data does: topic:p,p per topic.
func renderTPs(tps []TopicPartition) string {
	tps = slices.Clone(tps)
	slices.SortFunc(tps, Compare)
	var b strings.Builder
	for i, tp := range tps {
		switch {
		case i == 0:
			b.WriteString(tp.Topic + ":")
		case tps[i-1].Topic != tp.Topic:
			b.WriteString(" " + tp.Topic + ":")
		default:
			b.WriteString(",")
		}
		b.WriteString(strconv.Itoa(int(tp.Partition)))
	}
	return b.String()
}

func loadServerCases(t *testing.T) []serverCase {
	data, err := os.ReadFile("testdata/server_assignors.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []serverCase
	var c *serverCase
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		bad := func(err error) { t.Fatalf("server_assignors.txt:%d: %q: %v", n+1, line, err) }
		switch f[0] {
		case "test":
			cases = append(cases, serverCase{name: f[1], assignor: f[2], hetero: len(f) > 3 && f[3] == "heterogeneous", expect: map[string]string{}})
			c = &cases[len(cases)-1]
		case "topic":
			id, err := ParseTopicID(kafkaTestTopicIDs[f[1]])
			if err != nil {
				bad(err)
			}
			np, _ := strconv.Atoi(f[2])
			c.topics = append(c.topics, ServerTopic{Name: f[1], ID: id, Partitions: int32(np)})
		case "member":
			m := ServerMember{ID: f[1]}
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "sub":
					if v != "" {
						m.Topics = strings.Split(v, ",")
					}
				case "owned":
					if m.Assigned, err = parseTPList(v, "/"); err != nil {
						bad(err)
					}
				case "instance":
					m.InstanceID = v
				default:
					bad(fmt.Errorf("unknown key %q", k))
				}
			}
			c.members = append(c.members, m)
		case "expect":
			tps, err := parseTPList(strings.Join(f[2:], "/"), "/")
			if err != nil {
				bad(err)
			}
			c.expect[f[1]] = renderTPs(tps)
		case "expect-none":
			c.none = true
		case "expect-error":
			c.err = true
		default:
			bad(fmt.Errorf("unknown directive"))
		}
	}
	return cases
}

// TestServerAssignorsKafkaVectors runs Kafka's own assignor unit-test
// cases (testdata/server_assignors.txt) through Uniform and ServerRange.
func TestServerAssignorsKafkaVectors(t *testing.T) {
	cases := loadServerCases(t)
	if len(cases) < 30 {
		t.Fatalf("%d cases loaded: the test data lost some", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got Assignment
			var err error
			switch {
			case c.hetero:
				byName := map[string]ServerTopic{}
				for _, tp := range c.topics {
					byName[tp.Name] = tp
				}
				got = uniformHeterogeneous(c.members, byName)
			default:
				a, aerr := ServerAssignorByName(c.assignor)
				if aerr != nil {
					t.Fatal(aerr)
				}
				got, err = a.Assign(c.members, c.topics)
			}
			if c.err {
				if err == nil {
					t.Fatalf("got %v, want an error (PartitionAssignorException)", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.none {
				if len(got) != 0 {
					t.Fatalf("got %v, want no members", got)
				}
				return
			}
			if len(got) != len(c.expect) {
				t.Errorf("got %d members %v, want %d", len(got), got, len(c.expect))
			}
			for id, want := range c.expect {
				if g := renderTPs(got[id]); g != want {
					t.Errorf("member %s: got %q, want %q", id, g, want)
				}
			}
		})
	}
}

// TestUniformValidityAndBalanceForLargeSampleSet is Kafka's
// testValidityAndBalanceForLargeSampleSet: 99 topics of 3 partitions, 49
// members; every partition assigned once, sizes differ by at most one.
// Kafka draws random topic ids; these are fixed per seed of a simple LCG.
func TestUniformValidityAndBalanceForLargeSampleSet(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		x := seed
		var topics []ServerTopic
		var names []string
		for i := 1; i < 100; i++ {
			var id TopicID
			for j := range id {
				x = x*6364136223846793005 + 1442695040888963407
				id[j] = byte(x >> 56)
			}
			name := "topic-" + strconv.Itoa(i)
			topics = append(topics, ServerTopic{Name: name, ID: id, Partitions: 3})
			names = append(names, name)
		}
		var members []ServerMember
		for i := 1; i < 50; i++ {
			members = append(members, ServerMember{ID: "member" + strconv.Itoa(i), Topics: names})
		}
		got, err := Uniform{}.Assign(members, topics)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[TopicPartition]string{}
		lo, hi := 1<<30, 0
		for _, m := range members {
			for _, tp := range got[m.ID] {
				if o, ok := seen[tp]; ok {
					t.Fatalf("seed %d: %v assigned to %s and %s", seed, tp, o, m.ID)
				}
				seen[tp] = m.ID
			}
			lo, hi = min(lo, len(got[m.ID])), max(hi, len(got[m.ID]))
		}
		if len(seen) != 99*3 || hi-lo > 1 {
			t.Fatalf("seed %d: %d partitions assigned (want 297), sizes %d..%d", seed, len(seen), lo, hi)
		}
	}
}

// TestServerRangeStaticMembership is Kafka's testStaticMembership and
// testMixedStaticMembership: a static member that rejoins under a new
// member id keeps its range, and so does everyone else.
func TestServerRangeStaticMembership(t *testing.T) {
	for _, tc := range []struct {
		partitions int32
		members    []ServerMember
	}{
		{3, []ServerMember{{ID: "A", InstanceID: "instanceA"}, {ID: "B", InstanceID: "instanceB"}}},
		{5, []ServerMember{{ID: "A", InstanceID: "instanceA"}, {ID: "C", InstanceID: "instanceC"}, {ID: "B"}}},
	} {
		topics := []ServerTopic{{Name: "topic1", Partitions: tc.partitions}}
		for i := range tc.members {
			tc.members[i].Topics = []string{"topic1"}
		}
		first, err := ServerRange{}.Assign(tc.members, topics)
		if err != nil {
			t.Fatal(err)
		}
		again := slices.Clone(tc.members)
		again[0].ID = "memberA1"
		second, err := ServerRange{}.Assign(again, topics)
		if err != nil {
			t.Fatal(err)
		}
		if renderTPs(first["A"]) != renderTPs(second["memberA1"]) {
			t.Errorf("%d partitions: A had %v, its successor memberA1 got %v", tc.partitions, first["A"], second["memberA1"])
		}
		for _, m := range tc.members[1:] {
			if renderTPs(first[m.ID]) != renderTPs(second[m.ID]) {
				t.Errorf("%d partitions: %s had %v, then %v", tc.partitions, m.ID, first[m.ID], second[m.ID])
			}
		}
	}
}

func TestParseTopicIDRoundTrip(t *testing.T) {
	for _, s := range kafkaTestTopicIDs {
		// NB: 22 characters carry 132 bits; the 4 past the 16 bytes are
		// dropped, as by Java's decoder, so compare ids, not strings.
		id, err := ParseTopicID(s)
		again, err2 := ParseTopicID(id.String())
		if err != nil || err2 != nil || again != id {
			t.Fatalf("%s: %v %v %v", s, id, err, err2)
		}
	}
	if _, err := ParseTopicID("short"); err == nil {
		t.Fatal("a 5-character id parsed")
	}
}
