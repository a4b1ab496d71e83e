package raft

// This file is KIP-853's voter set (Kafka 3.9's VoterSet and
// KRaftControlRecordStateMachine): with kraft.version 1 a voter is a
// ReplicaKey, a node id and the directory id of its metadata log
// directory (meta.properties' directory.id), and the set lives in the
// log as control records: KRAFT_VERSION (type 5, KRaftVersionRecord v0)
// and KRAFT_VOTERS (type 6, VotersRecord v0). The set in force is the
// last one in the log, committed or not (a leader counts a change at
// once, as Kafka's does); a truncation takes the set back with the
// records it removes. A node whose (id, directory id) is not in the set is
// an observer: it neither stands for election nor votes (a Vote or
// BeginQuorumEpoch for another directory id is refused with
// INVALID_VOTER_KEY), and the leader does not count its fetches.
//
// With kraft.version 0 (controller.quorum.voters, the static quorum) the
// voters are node ids only (the directory id is zero, which matches any)
// and nothing is written to the log: a voter that comes back with a blank
// disk still votes, KAFKA-14077's hazard.
//
// Formatting (kafka-storage.sh format): with kraft.version 1 a member
// whose disk is blank at its first start is formatted with
// --initial-controllers: meta.properties gets the directory id the
// operator listed for it, and a voter's metadata directory the bootstrap
// checkpoint 00000000000000000000-0000000000.checkpoint holding the
// initial voter set; the first leader writes that set into the log at
// offset 0 (LeaderState.appendStartOfEpochControlRecords), so that every
// replica learns it by fetching. A member whose disk is blank at a later
// start (wipe-disk) is formatted with --no-initial-controllers: a fresh
// random directory id, from the node's seeded random stream, and no
// voter set: it fetches from the bootstrap servers as an observer until
// an AddRaftVoter adds it.
//
// Simplifications vs Kafka, and why: the initial directory ids are
// derived from cluster.id and node.id (an operator picks them with
// kafka-storage random-uuid and lists them in --initial-controllers; the
// derivation keeps every node's list the same without a shared random
// draw); a voter's endpoint is CONTROLLER://node-<id>:9093 (kafkasim
// routes by node id); the bootstrap servers are controller.quorum.voters'
// ids (controller.quorum.bootstrap.servers names the same nodes);
// meta.properties is written by the raft client at its start, in the
// metadata log directory, and only with kraft.version 1 (a static quorum
// never reads directory.id, and writing it would shift the seeded random
// stream of every static run).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// Control record types of KIP-853 (ControlRecordType.java).
const (
	controlKRaftVersion int16 = 5
	controlKRaftVoters  int16 = 6
)

// bootstrapCheckpoint is Kafka's bootstrap snapshot (Snapshots.BOOTSTRAP_SNAPSHOT_ID, 0-0).
const bootstrapCheckpoint = "00000000000000000000-0000000000.checkpoint"

// metaPropertiesFile is meta.properties in the metadata log directory.
const metaPropertiesFile = "meta.properties"

// voterKey is Kafka's ReplicaKey: a node id and its directory id. A zero
// dir (kraft.version 0) matches any directory id.
type voterKey struct {
	id  int32
	dir [16]byte
}

// voterSet is a voter set, sorted by id (ids are unique in a set).
type voterSet []voterKey

func (s voterSet) ids() []int32 {
	out := make([]int32, len(s))
	for i, v := range s {
		out[i] = v.id
	}
	return out
}

func (s voterSet) find(id int32) (voterKey, bool) {
	for _, v := range s {
		if v.id == id {
			return v, true
		}
	}
	return voterKey{}, false
}

// String renders the set as 3000:<dir>,3001:<dir> (dirs as Kafka prints
// a Uuid; a zero dir is left out).
func (s voterSet) String() string {
	var b strings.Builder
	for i, v := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(v.id)))
		if v.dir != ([16]byte{}) {
			b.WriteString(":" + uuidString(v.dir))
		}
	}
	return b.String()
}

// votersAt is a voter set and the offset of the record that set it (-1:
// the bootstrap checkpoint or the static voters; a snapshot's end - 1).
type votersAt struct {
	offset int64
	set    voterSet
}

// uuidString is Kafka's Uuid.toString: URL-safe base64 without padding.
func uuidString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, false
	}
	copy(u[:], b)
	return u, true
}

// InitialDirectoryID is the directory id kafkasim formats node id with
// at a cluster's creation (--initial-controllers), derived from the
// cluster id so that every node lists the same ids.
func InitialDirectoryID(clusterID string, id int32) [16]byte {
	h := sha256.Sum256([]byte(clusterID + "/directory.id/" + strconv.Itoa(int(id))))
	var u [16]byte
	copy(u[:], h[:16])
	u[6] = u[6]&0x0f | 0x40 // a version-4 UUID, as Uuid.randomUuid's
	u[8] = u[8]&0x3f | 0x80
	return u
}

func randomUUID(ctx *sim.Context) [16]byte {
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], ctx.Rand().Uint64())
	binary.BigEndian.PutUint64(u[8:], ctx.Rand().Uint64())
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// dynamic reports whether the quorum is KIP-853's (kraft.version 1).
func (c *Client) dynamic() bool { return c.cfg.KRaftVersion >= 1 }

// format reads meta.properties, formatting a blank disk first (see the
// file comment), and returns the bootstrap voter set (nil: none).
func (c *Client) format() voterSet {
	disk := c.ctx.Disk()
	mp := path.Join(c.cfg.Dir, metaPropertiesFile)
	boot := path.Join(c.cfg.Dir, MetadataTopic+"-0", bootstrapCheckpoint)
	if !disk.Exists(mp) {
		dir, initial := randomUUID(c.ctx), c.ctx.Incarnation() == 0
		if initial {
			dir = InitialDirectoryID(c.cfg.ClusterID, c.cfg.NodeID)
		}
		text := "#\nnode.id=" + strconv.Itoa(int(c.cfg.NodeID)) + "\ndirectory.id=" + uuidString(dir) +
			"\nversion=1\ncluster.id=" + c.cfg.ClusterID + "\n"
		writeDurably(disk, mp, []byte(text))
		if initial && slices.Contains(c.bootstrap, c.cfg.NodeID) {
			var set voterSet
			for _, id := range c.bootstrap {
				set = append(set, voterKey{id: id, dir: InitialDirectoryID(c.cfg.ClusterID, id)})
			}
			writeDurably(disk, boot, encodeSnapshot(snapshotID{}, 0, nil, set))
		}
	}
	b, err := disk.ReadFile(mp)
	must(err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "directory.id="); ok {
			u, ok := parseUUID(v)
			if !ok {
				panic("raft: " + mp + ": directory.id " + strconv.Quote(v) + " is not a Uuid")
			}
			c.dir = u
		}
	}
	if !disk.Exists(boot) {
		return nil
	}
	data, err := disk.ReadFile(boot)
	must(err)
	_, set, err := decodeSnapshotVoters(data)
	must(err)
	return set
}

func writeDurably(disk *sim.Disk, name string, data []byte) {
	tmp := name + ".tmp"
	if disk.Exists(tmp) {
		must(disk.Remove(tmp))
	}
	must(disk.Create(tmp))
	must(disk.Append(tmp, data))
	must(disk.Sync(tmp))
	must(disk.Rename(tmp, name))
	must(disk.SyncDir(path.Dir(name)))
}

// setVoters puts set in force: the voter ids, whether this member is a
// voter (its id with its directory id), and, on a leader, a replica state
// for every new voter.
func (c *Client) setVoters(set voterSet) {
	c.vset = set
	c.voters = set.ids()
	k, ok := set.find(c.cfg.NodeID)
	c.voter = ok && (k.dir == [16]byte{} || k.dir == c.dir)
	if c.role == roleLeader {
		for _, v := range c.voters {
			if c.replicas[v] == nil {
				c.replicas[v] = &replica{endOffset: -1}
			}
		}
	}
}

// isVoterKey reports whether (id, dir) is a voter of the set in force: a
// static voter's zero dir, or a fetcher that sends none, matches.
func (c *Client) isVoterKey(id int32, dir [16]byte) bool {
	k, ok := c.vset.find(id)
	return ok && (k.dir == [16]byte{} || dir == [16]byte{} || k.dir == dir)
}

// voterDir is the directory id the set in force holds for id (zero when
// none, or static).
func (c *Client) voterDir(id int32) [16]byte {
	k, _ := c.vset.find(id)
	return k.dir
}

// pushVoters records a set read from the log at offset and puts it in force.
func (c *Client) pushVoters(offset int64, set voterSet) {
	c.vhist = append(c.vhist, votersAt{offset: offset, set: set})
	c.setVoters(set)
	c.ctx.Log("raft-voters", sim.I("offset", offset), sim.S("voters", set.String()))
}

// scanVoters reads the KRAFT_VOTERS records of the log's batches.
func (c *Client) scanVoters(bs []storage.RecordBatch) {
	if !c.dynamic() {
		return
	}
	for _, b := range bs {
		if b.Attributes&storage.ControlFlagMask == 0 {
			continue
		}
		for i, r := range b.Records {
			if controlType(r) != controlKRaftVoters {
				continue
			}
			set, err := decodeVotersRecord(r.Value)
			must(err)
			c.pushVoters(b.BaseOffset+int64(i), set)
		}
	}
}

// votersAt returns the set in force at offset.
func (c *Client) votersAt(offset int64) voterSet {
	set := c.vhist[0].set
	for _, h := range c.vhist {
		if h.offset <= offset {
			set = h.set
		}
	}
	return set
}

// votersTruncated takes the set back to the last one below end.
func (c *Client) votersTruncated(end int64) {
	n := len(c.vhist)
	for n > 1 && c.vhist[n-1].offset >= end {
		n--
	}
	if n < len(c.vhist) {
		c.vhist = c.vhist[:n]
		c.setVoters(c.vhist[n-1].set)
		c.ctx.Log("raft-voters", sim.I("offset", c.vhist[n-1].offset), sim.S("voters", c.vhist[n-1].set.String()), sim.S("why", "truncate"))
	}
}

// votersRecords are the KRAFT_VERSION and KRAFT_VOTERS control records of set.
func votersRecords(nowMs int64, set voterSet) []storage.Record {
	return []storage.Record{
		{Timestamp: nowMs, Key: controlKey(controlKRaftVersion), Value: kraftVersionRecord(1)},
		{Timestamp: nowMs, Key: controlKey(controlKRaftVoters), Value: votersRecord(set)},
	}
}

// kraftVersionRecord is KRaftVersionRecord v0: Version, KRaftVersion.
func kraftVersionRecord(v int16) []byte {
	return controlValue(binary.BigEndian.AppendUint16(nil, uint16(v)))
}

// votersRecord is VotersRecord v0 (flexible): Voters [VoterId,
// VoterDirectoryId, Endpoints [Name, Host, Port], KRaftVersionFeature
// {MinSupportedVersion, MaxSupportedVersion}].
func votersRecord(set voterSet) []byte {
	compactString := func(b []byte, s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)+1))
		return append(b, s...)
	}
	b := binary.AppendUvarint(nil, uint64(len(set)+1))
	for _, v := range set {
		b = binary.BigEndian.AppendUint32(b, uint32(v.id))
		b = append(b, v.dir[:]...)
		b = binary.AppendUvarint(b, 2) // one endpoint
		b = compactString(b, "CONTROLLER")
		b = compactString(b, "node-"+strconv.Itoa(int(v.id)))
		b = binary.BigEndian.AppendUint16(b, 9093)
		b = append(b, 0)                        // the endpoint's tagged fields
		b = binary.BigEndian.AppendUint16(b, 0) // MinSupportedVersion
		b = binary.BigEndian.AppendUint16(b, 1) // MaxSupportedVersion
		b = append(b, 0)                        // the feature's tagged fields
		b = append(b, 0)                        // the voter's tagged fields
	}
	return controlValue(b)
}

var errVotersRecord = errors.New("raft: a malformed VotersRecord")

// decodeVotersRecord reads votersRecord's bytes back.
func decodeVotersRecord(v []byte) (voterSet, error) {
	if len(v) < 5 {
		return nil, errVotersRecord
	}
	b := v[4:] // serialization version, Version
	uv := func() (uint64, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return n, true
	}
	take := func(n int) ([]byte, bool) {
		if n < 0 || len(b) < n {
			return nil, false
		}
		out := b[:n]
		b = b[n:]
		return out, true
	}
	n, ok := uv()
	if !ok || n == 0 {
		return nil, errVotersRecord
	}
	var set voterSet
	for i := uint64(0); i < n-1; i++ {
		idb, ok1 := take(4)
		dir, ok2 := take(16)
		ne, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || ne == 0 {
			return nil, errVotersRecord
		}
		k := voterKey{id: int32(binary.BigEndian.Uint32(idb))}
		copy(k.dir[:], dir)
		for e := uint64(0); e < ne-1; e++ {
			for s := 0; s < 2; s++ { // Name, Host
				l, ok := uv()
				if !ok || l == 0 {
					return nil, errVotersRecord
				}
				if _, ok := take(int(l - 1)); !ok {
					return nil, errVotersRecord
				}
			}
			if _, ok := take(3); !ok { // Port, tagged fields
				return nil, errVotersRecord
			}
		}
		if _, ok := take(6); !ok { // the feature, its and the voter's tagged fields
			return nil, errVotersRecord
		}
		set = append(set, k)
	}
	slices.SortFunc(set, func(a, b voterKey) int { return int(a.id) - int(b.id) })
	return set, nil
}
