// fetchbound.go: the consumer checker's check of each fetched record
// against the fetch response that carried it.
//
// What it checks: a consumer's Fetch reads a partition up to its high
// watermark (read_uncommitted) or its last stable offset (read_committed,
// KIP-98), and the response reports both; so every record a response
// carries sits below the HW it reports, and for read_committed below the
// LSO (Kafka's Partition.fetchRecords reads with maxOffset = the HW or
// the LSO of the same snapshot it answers with). A record at or past them
// is a read of data the cluster has not committed (kind read-beyond-hw,
// read-beyond-lso). It holds for a follower serving a consumer (KIP-392):
// the follower reads to its own HW and reports that HW. Followers'
// fetches read to the LEO, but followers are not consumers and are not
// recorded. Every Consume and Poll whose records carry the response's
// bounds (Record.HighWatermark, Record.LastStableOffset) is judged: the
// group consumers' deliveries and the final reader's polls.
//
// Whether Kafka permits it: never. No fact of a run (an unclean election,
// a lost leader) lets a leader or follower answer a consumer past its own
// HW: a truncation may take records away later, but the response that
// served them said they were committed.
//
// What it simplifies: a bound of 0 means not recorded (a scripted read),
// so a response carrying records with an HW of 0 is not judged.

package checkers

import "strconv"

// fetchBounds finds records delivered at or past the HW (read_committed:
// the LSO) of the fetch response that carried them: one anomaly per
// operation, naming its first such record.
func fetchBounds(h History) []Anomaly {
	var out []Anomaly
	for i := range h.Ops {
		op := &h.Ops[i]
		if (op.Kind != Consume && op.Kind != Poll) || (op.Outcome != OK && op.Outcome != Info) {
			continue
		}
		var bad []int64
		kind, desc, value := "", "", ""
		for _, r := range op.Records {
			switch {
			case r.HighWatermark > 0 && r.Offset >= r.HighWatermark:
				if kind == "" {
					kind, value = "read-beyond-hw", r.Value
					desc = "high watermark " + strconv.FormatInt(r.HighWatermark, 10)
				}
			case r.LastStableOffset > 0 && r.Offset >= r.LastStableOffset:
				if kind == "" {
					kind, value = "read-beyond-lso", r.Value
					desc = "last stable offset " + strconv.FormatInt(r.LastStableOffset, 10) + " (read_committed)"
				}
			default:
				continue
			}
			bad = append(bad, r.Offset)
		}
		if kind == "" {
			continue
		}
		out = append(out, Anomaly{Kind: kind, Topic: op.Topic, Partition: op.Partition, Value: value, Offsets: bad, Ops: []int{op.Index},
			Description: op.Process + " got " + strconv.Itoa(len(bad)) + " record(s) from offset " + strconv.FormatInt(bad[0], 10) +
				" in a fetch response whose " + desc + " is not above them: a consumer's fetch reads only below it"})
	}
	return out
}
