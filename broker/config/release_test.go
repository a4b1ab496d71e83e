package config

import (
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestReleasesTableRowByRow checks every release against an explicit list
// of where each mechanism is on: the table must say exactly this.
func TestReleasesTableRowByRow(t *testing.T) {
	// first[name] is the first release with the mechanism on, last[name]
	// the last (0: still on in Newest).
	type span struct{ first, last Version }
	on := map[string]span{
		"HaltOnTruncationFailure":      {V0_8_0, V0_10_2},
		"UncleanElectionDefault":       {V0_8_0, V0_10_2},
		"LeaderEpochFencing":           {V2_1, 0},
		"ConsumerTruncationDetection":  {V2_1, 0},
		"KAFKA7164Fixed":               {V2_1, 0},
		"FetchFromFollower":            {V2_4, 0},
		"LongerTimeouts":               {V2_5, 0},
		"TruncationInFetch":            {V2_7, 0},
		"MessageFormatFollowsProtocol": {V0_8_0, V2_8},
		"Idempotence":                  {V0_11_0, 0},
		// 3.0 and 3.1 mean 3.0.1 and 3.1.1 (TestProducerIdempotenceByRelease
		// has 3.0.0 and 3.1.0, which never applied the default).
		"IdempotenceDefault":       {V3_0, 0},
		"AcksAllDefault":           {V3_0, 0},
		"InFlightAboveFiveRefused": {V4_0, 0},
		"KRaftAvailable":           {V3_3, 0},
		"ZooKeeper":                {V0_8_0, V3_9},
		"PreVote":                  {V4_0, 0},
		"NoCheckQuorum":            {V3_3, V3_6},
		"ELRAvailable":             {V4_0, 0},
		"ELRDefault":               {V4_1, 0},
		"RaftFetchHighWatermark":   {V4_1, 0},
		"Transactions":             {V0_11_0, 0},
		"TxnPartitionVerification": {V3_6, 0},
		"UncleanElectionKRaft":     {V3_9, 0},
		// 4.0.0 only: the default patch of 4.0 is 4.0.1 (TestPatchReleases).
		"FencedLastKnownLeaderElected": {V4_0 + 1, V4_0},
		"TxnFenceBumpsEpochTwice":      {V4_0 + 1, V4_0},
		// KAFKA-19446 ships in 4.2, past Newest: on in no row yet.
		"StrictTV2MarkerEpoch": {V4_2, 0},
	}
	truncation := func(v Version) Truncation {
		switch {
		case v <= V0_10_2:
			return HW
		case v <= V1_1:
			return KIP101
		}
		return KIP279
	}
	typ := reflect.TypeOf(Mechanisms{})
	for i := 0; i < typ.NumField(); i++ {
		if name := typ.Field(i).Name; name != "Truncation" && name != "TransactionVersion" && name != "IdempotenceMaxInFlight" {
			if _, ok := on[name]; !ok {
				t.Errorf("Mechanisms.%s has no expectation in this test", name)
			}
		}
	}
	for _, v := range Versions() {
		m := v.Mechanisms()
		val := reflect.ValueOf(m)
		if tv := map[bool]int{true: 1}[v >= V0_11_0] + map[bool]int{true: 1}[v >= V4_0]; m.TransactionVersion != tv {
			t.Errorf("%s: TransactionVersion = %d, want %d", v, m.TransactionVersion, tv)
		}
		if mif := map[bool]int{true: 1}[v == V0_11_0] + map[bool]int{true: 5}[v >= V1_0]; m.IdempotenceMaxInFlight != mif {
			t.Errorf("%s: IdempotenceMaxInFlight = %d, want %d", v, m.IdempotenceMaxInFlight, mif)
		}
		if m.Truncation != truncation(v) {
			t.Errorf("%s: Truncation = %s, want %s", v, m.Truncation, truncation(v))
		}
		for name, s := range on {
			want := v >= s.first && (s.last == 0 || v <= s.last)
			if got := val.FieldByName(name).Bool(); got != want {
				t.Errorf("%s: %s = %v, want %v", v, name, got, want)
			}
		}
	}
	if !sort.SliceIsSorted(releases, func(i, j int) bool {
		return releases[i].From < releases[j].From || releases[i].From == releases[j].From && releases[i].Patch < releases[j].Patch
	}) {
		t.Error("the releases table is not in release order")
	}
	for _, r := range releases {
		if !strings.Contains(r.Cite, "KIP-") && !strings.Contains(r.Cite, "KAFKA-") {
			t.Errorf("row %s cites no KIP or JIRA: %q", r.From, r.Cite)
		}
	}
	if (Version(0)).Mechanisms() != (Mechanisms{}) {
		t.Error("an invalid version has mechanisms")
	}
}

// TestDefaultsReadTheTable checks that the version-dependent defaults follow
// the table.
func TestDefaultsReadTheTable(t *testing.T) {
	for _, v := range Versions() {
		m := v.Mechanisms()
		b := DefaultBrokerFor(v)
		if b.Truncation != m.Truncation || TruncationFor(v) != m.Truncation {
			t.Errorf("%s: truncation %s, table %s", v, b.Truncation, m.Truncation)
		}
		if b.LeaderEpochFencing != m.LeaderEpochFencing || b.TruncationInFetch != m.TruncationInFetch ||
			b.UncleanLeaderElectionEnable != m.UncleanElectionDefault || b.KRaft.PreVote != m.PreVote || b.KRaft.CheckQuorum == m.NoCheckQuorum ||
			b.KRaftMode() == m.ZooKeeper {
			t.Errorf("%s: broker defaults %+v do not follow the table %+v", v, b, m)
		}
		p := DefaultProducerFor(v)
		if p.EnableIdempotence != m.IdempotenceDefault || (p.Acks == AcksAll) != m.AcksAllDefault {
			t.Errorf("%s: producer acks=%s idempotence=%v, table %+v", v, p.Acks, p.EnableIdempotence, m)
		}
	}
	for _, c := range []struct {
		t    Truncation
		want Version
	}{{HW, V0_10_2}, {KIP101, V1_1}, {KIP279, V3_9}} {
		if got := c.t.Version(); got != c.want {
			t.Errorf("%s selects %s, want %s", c.t, got, c.want)
		}
	}
	if p, err := ParseProducerFor(V2_8, nil); err != nil || p.Acks != AcksLeader || p.EnableIdempotence {
		t.Errorf("2.8 producer: %+v, %v; want acks=1, no idempotence", p, err)
	}
	// Idempotence asked for, or implied by transactional.id, with acks unset:
	// acks=all (Kafka's ProducerConfig from 0.11); acks=1 given is a conflict.
	for _, props := range []map[string]string{{PropEnableIdempotence: "true"}, {PropTransactionalID: "tx"}} {
		if p, err := ParseProducerFor(V1_1, props); err != nil || p.Acks != AcksAll || !p.EnableIdempotence {
			t.Errorf("1.1 producer %v: %+v, %v; want acks=all, idempotent", props, p, err)
		}
	}
	if _, err := ParseProducerFor(V1_1, map[string]string{PropTransactionalID: "tx", PropAcks: "1"}); err == nil {
		t.Error("1.1 transactional producer with acks=1 accepted")
	}
	if p, err := ParseProducer(nil); err != nil || p != DefaultProducer() || p.Acks != AcksAll || !p.EnableIdempotence {
		t.Errorf("default producer: %+v, %v; want acks=all with idempotence", p, err)
	}
}

func TestParseMatrixVersion(t *testing.T) {
	good := map[string]map[string]string{
		"3.9-zk":    {PropInterBrokerProtocolVersion: "3.9"},
		"3.9-kraft": {PropInterBrokerProtocolVersion: "3.9", PropProcessRoles: "broker"},
		"3.3-kraft": {PropInterBrokerProtocolVersion: "3.3", PropProcessRoles: "broker"},
		"2.0":       {PropInterBrokerProtocolVersion: "2.0"},
		"0.10.2":    {PropInterBrokerProtocolVersion: "0.10.2"},
		"4.0":       {PropInterBrokerProtocolVersion: "4.0"},
		" 4.1 ":     {PropInterBrokerProtocolVersion: "4.1"},
		// Patch labels keep the patch; any patch of a known release.
		"4.0.0":       {PropInterBrokerProtocolVersion: "4.0.0"},
		"4.0.1":       {PropInterBrokerProtocolVersion: "4.0.1"},
		"3.9.0-kraft": {PropInterBrokerProtocolVersion: "3.9.0", PropProcessRoles: "broker"},
		"0.10.2.1":    {PropInterBrokerProtocolVersion: "0.10.2.1"},
	}
	for label, want := range good {
		got, err := ParseMatrixVersion(label)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseMatrixVersion(%q) = %v, %v; want %v", label, got, err, want)
			continue
		}
		c, err := Parse(got)
		if err != nil {
			t.Errorf("%q: Parse(%v): %v", label, got, err)
			continue
		}
		if kraft := strings.HasSuffix(strings.TrimSpace(label), "-kraft") || c.Broker.InterBrokerProtocolVersion >= V4_0; c.Broker.KRaftMode() != kraft {
			t.Errorf("%q: KRaft mode %v, want %v", label, c.Broker.KRaftMode(), kraft)
		}
	}
	for _, bad := range []string{"", "3.9", "2.0-kraft", "4.0-zk", "4.0-kraft", "5.0", "3.9-KRaft", "latest", "3.9.0", "4.0.0-kraft", "4.0.x", "4.0.01", "2.0.1-zk"} {
		_, err := ParseMatrixVersion(bad)
		var e *Error
		if !errors.As(err, &e) || e.Kind != BadValue || !strings.Contains(e.Allowed, "3.9-zk, 3.9-kraft, 4.0, 4.0.0, 4.0.1, 4.1") {
			t.Errorf("ParseMatrixVersion(%q) = %v; want a BadValue listing the labels", bad, err)
		}
	}
	labels := MatrixLabels()
	if labels[0] != "0.8.0" || labels[len(labels)-1] != "4.3" {
		t.Errorf("labels %v", labels)
	}
}

func TestMetadataVersion(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		want  Version
	}{
		{map[string]string{PropMetadataVersion: "4.0-IV3"}, V4_0},
		{map[string]string{PropMetadataVersion: "4.1"}, V4_1},
		{map[string]string{PropMetadataVersion: "3.9-IV0", PropProcessRoles: "broker"}, V3_9},
		{map[string]string{PropMetadataVersion: "4.0-IV1", PropInterBrokerProtocolVersion: "4.0"}, V4_0},
		// An older level than the release's: a cluster formatted with
		// --release-version, or an upgrade not yet finalized.
		{map[string]string{PropMetadataVersion: "3.9", PropInterBrokerProtocolVersion: "4.0"}, V4_0},
		{map[string]string{PropMetadataVersion: "3.5-IV2", PropInterBrokerProtocolVersion: "3.7", PropProcessRoles: "broker"}, V3_7},
	} {
		b, err := ParseBroker(c.props)
		if err != nil || b.InterBrokerProtocolVersion != c.want || !b.KRaftMode() {
			t.Errorf("ParseBroker(%v) = %s, KRaft %v, %v; want %s in KRaft mode", c.props, b.InterBrokerProtocolVersion, b.KRaftMode(), err, c.want)
		}
	}
	for _, c := range []struct {
		props       map[string]string
		kind        ErrorKind
		prop, other string
	}{
		// ZooKeeper mode: metadata.version is KRaft's.
		{map[string]string{PropMetadataVersion: "3.9"}, Conflict, PropMetadataVersion, PropProcessRoles},
		{map[string]string{PropMetadataVersion: "3.5-IV2", PropInterBrokerProtocolVersion: "3.5"}, Conflict, PropMetadataVersion, PropProcessRoles},
		// Two releases.
		{map[string]string{PropMetadataVersion: "4.1-IV0", PropInterBrokerProtocolVersion: "4.0"}, Conflict, PropMetadataVersion, PropInterBrokerProtocolVersion},
		{map[string]string{PropMetadataVersion: "3.7-IV0", PropInterBrokerProtocolVersion: "3.6", PropProcessRoles: "broker"}, Conflict, PropMetadataVersion, PropInterBrokerProtocolVersion},
		// 4.0 dropped the levels below 3.3-IV3.
		{map[string]string{PropMetadataVersion: "3.3-IV2", PropInterBrokerProtocolVersion: "4.0"}, Conflict, PropMetadataVersion, PropInterBrokerProtocolVersion},
		// ELR needs 4.0-IV1.
		{map[string]string{PropMetadataVersion: "4.0-IV0", PropInterBrokerProtocolVersion: "4.1"}, Conflict, PropEligibleLeaderReplicasVersion, PropMetadataVersion},
		// Not a release.
		{map[string]string{PropMetadataVersion: "4.0-IVx"}, BadValue, PropMetadataVersion, ""},
		{map[string]string{PropMetadataVersion: "9.9"}, BadValue, PropMetadataVersion, ""},
		// An internal version Kafka does not have, a release without KRaft.
		{map[string]string{PropMetadataVersion: "3.6-IV3"}, BadValue, PropMetadataVersion, ""},
		{map[string]string{PropMetadataVersion: "3.2"}, BadValue, PropMetadataVersion, ""},
		{map[string]string{PropMetadataVersion: "3.6-IV01"}, BadValue, PropMetadataVersion, ""},
	} {
		_, err := ParseBroker(c.props)
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || e.Property != c.prop || e.Other != c.other {
			t.Errorf("ParseBroker(%v) = %v; want %v on %s (other %q)", c.props, err, c.kind, c.prop, c.other)
		}
	}
	// A hand-built broker is checked too.
	b := DefaultBrokerFor(V4_0)
	b.MetadataVersion = "4.1-IV0"
	var e *Error
	if err := b.Validate(); !errors.As(err, &e) || e.Kind != Conflict || e.Other != PropInterBrokerProtocolVersion {
		t.Errorf("hand-built 4.0 broker with metadata.version 4.1-IV0: %v", err)
	}
}

// TestMetadataVersionFollowsRelease: without metadata.version a KRaft
// cluster bootstraps with its release's latest production level, and only
// levels below 3.6-IV0 bump the leader epoch on an ISR shrink (KAFKA-15021).
func TestMetadataVersionFollowsRelease(t *testing.T) {
	want := map[Version]string{V3_3: "3.3-IV3", V3_4: "3.4-IV0", V3_5: "3.5-IV2", V3_6: "3.6-IV2", V3_7: "3.7-IV4",
		V3_8: "3.8-IV0", V3_9: "3.9-IV0", V4_0: "4.0-IV3", V4_1: "4.1-IV1"}
	for v, name := range want {
		props := map[string]string{PropInterBrokerProtocolVersion: v.String()}
		if v < V4_0 {
			props[PropProcessRoles] = "broker"
		}
		b, err := ParseBroker(props)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		mv := b.MetadataVersionInEffect()
		if mv.String() != name || mv.LeaderEpochBumpOnISRShrink() != (v < V3_6) {
			t.Errorf("%s: metadata.version %s (bump on shrink %v), want %s", v, mv, mv.LeaderEpochBumpOnISRShrink(), name)
		}
	}
	b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: "3.7", PropProcessRoles: "broker", PropMetadataVersion: "3.5-IV2"})
	if err != nil || b.MetadataVersionInEffect().Level != 11 || !b.MetadataVersionInEffect().LeaderEpochBumpOnISRShrink() {
		t.Errorf("3.7 at 3.5-IV2: %v, %v", b.MetadataVersionInEffect(), err)
	}
	if mv := DefaultBrokerFor(V3_9).MetadataVersionInEffect(); mv.Level != 0 {
		t.Errorf("ZooKeeper mode has metadata.version %s", mv)
	}
	for i, m := range metadataVersions[1:] {
		if m.Level != metadataVersions[i].Level+1 {
			t.Errorf("%s: level %d after %s's %d", m, m.Level, metadataVersions[i], metadataVersions[i].Level)
		}
	}
}

// TestPatchReleases: a patch named in inter.broker.protocol.version picks
// its rows; "4.0" alone is 4.0.1 (DefaultPatch), so 4.0.0's bugs need the
// patch spelled out.
func TestPatchReleases(t *testing.T) {
	for _, c := range []struct {
		ibp       string
		release   string
		bug       bool
		wantPatch int
	}{
		{"4.0", "4.0", false, -1}, {"4.0.0", "4.0.0", true, 0}, {"4.0.1", "4.0.1", false, 1},
		{"4.0.2", "4.0.2", false, 2}, {"4.1", "4.1", false, -1}, {"4.1.0", "4.1.0", false, 0},
	} {
		b, err := ParseBroker(map[string]string{PropInterBrokerProtocolVersion: c.ibp})
		if err != nil {
			t.Fatalf("%s: %v", c.ibp, err)
		}
		m := b.Mechanisms()
		if b.Patch != c.wantPatch || b.Release() != c.release || m.FencedLastKnownLeaderElected != c.bug || m.TxnFenceBumpsEpochTwice != c.bug {
			t.Errorf("%s: patch %d, release %s, KAFKA-19522 %v, KAFKA-19367 %v; want %d, %s, bugs %v",
				c.ibp, b.Patch, b.Release(), m.FencedLastKnownLeaderElected, m.TxnFenceBumpsEpochTwice, c.wantPatch, c.release, c.bug)
		}
		if !slices.Contains(b.Pairs(), PropInterBrokerProtocolVersion+"="+c.release) {
			t.Errorf("%s: pairs do not render the release as %s", c.ibp, c.release)
		}
	}
	if V4_0.DefaultPatch() != 1 || V3_9.DefaultPatch() != 0 {
		t.Errorf("default patches: 4.0 %d, 3.9 %d", V4_0.DefaultPatch(), V3_9.DefaultPatch())
	}
	if V3_9.MechanismsAt(0) != V3_9.Mechanisms() || V3_9.MechanismsAt(7) != V3_9.Mechanisms() {
		t.Error("3.9's patches differ though the table has no 3.9 patch row")
	}
}
