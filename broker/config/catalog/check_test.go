package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		kind    Kind
		release string
		name    string
		value   string
		// wantErr is "" for a value ConfigDef accepts, else a substring
		// of the error.
		wantErr string
	}{
		// int with Range [0,...]; values are trimmed as parseType does.
		{Topic, "3.9", "max.message.bytes", "1048588", ""},
		{Topic, "3.9", "max.message.bytes", " 42\t", ""},
		{Topic, "3.9", "max.message.bytes", "+7", ""},
		{Topic, "3.9", "max.message.bytes", "0", ""},
		{Topic, "3.9", "max.message.bytes", "abc", `max.message.bytes = "abc": not an int; allowed: an int in [0, 2147483647]`},
		{Topic, "3.9", "max.message.bytes", "-1", "below the minimum 0"},
		{Topic, "3.9", "max.message.bytes", "2147483648", "not an int"},
		{Topic, "3.9", "max.message.bytes", "1_000", "not an int"},
		{Topic, "3.9", "max.message.bytes", "1e3", "not an int"},
		{Topic, "3.9", "max.message.bytes", "", "not an int"},
		// long without validator: the Java long range.
		{Topic, "3.9", "retention.bytes", "-9223372036854775808", ""},
		{Topic, "3.9", "retention.bytes", "9223372036854775808", "allowed: a long in [-9223372036854775808, 9223372036854775807]"},
		// long with Range [-1,...].
		{Topic, "3.9", "retention.ms", "-1", ""},
		{Topic, "3.9", "retention.ms", "-2", "below the minimum -1"},
		// short with Range [1,...].
		{Broker, "3.9", "offsets.topic.replication.factor", "32767", ""},
		{Broker, "3.9", "offsets.topic.replication.factor", "32768", "not a short; allowed: a short in [1, 32767]"},
		{Broker, "3.9", "offsets.topic.replication.factor", "0", "below the minimum 1"},
		// int with Range [a,...,b].
		{Producer, "3.9", "retries", "2147483647", ""},
		{Broker, "4.1", "group.share.delivery.count.limit", "10", ""},
		{Broker, "4.1", "group.share.delivery.count.limit", "11", "above the maximum 10; allowed: an int in [2, 10]"},
		// double with Range [0,...,1].
		{Topic, "3.9", "min.cleanable.dirty.ratio", "0.25", ""},
		{Topic, "3.9", "min.cleanable.dirty.ratio", "1", ""},
		{Topic, "3.9", "min.cleanable.dirty.ratio", "1e-1", ""},
		{Topic, "3.9", "min.cleanable.dirty.ratio", "1.5", "above the maximum 1; allowed: a double in [0, 1]"},
		{Topic, "3.9", "min.cleanable.dirty.ratio", "-0.1", "below the minimum 0"},
		{Topic, "3.9", "min.cleanable.dirty.ratio", "half", "not a double"},
		{Broker, "3.9", "log.cleaner.io.max.bytes.per.second", "Infinity", ""},
		{Broker, "3.9", "log.cleaner.io.max.bytes.per.second", "inf", "not a double"},
		// boolean, case-insensitive.
		{Topic, "3.9", "unclean.leader.election.enable", "TRUE", ""},
		{Topic, "3.9", "unclean.leader.election.enable", " false ", ""},
		{Topic, "3.9", "unclean.leader.election.enable", "yes", "not a boolean; allowed: true or false"},
		{Topic, "3.9", "unclean.leader.election.enable", "1", "not a boolean"},
		// string with ValidString: case-sensitive.
		{Topic, "3.9", "compression.type", "zstd", ""},
		{Topic, "3.9", "compression.type", "ZSTD", "not a valid value; allowed: one of uncompressed, zstd, lz4, snappy, gzip, producer"},
		{Topic, "0.10.2", "compression.type", "zstd", "not a valid value"}, // zstd came with 2.1 (KIP-110)
		{Producer, "3.9", "acks", "all", ""},
		{Producer, "3.9", "acks", "-1", ""},
		{Producer, "3.9", "acks", "2", "one of all, -1, 0, 1"},
		// string with CaseInsensitiveValidString.
		{Consumer, "3.7", "group.protocol", "consumer", ""},
		{Consumer, "3.7", "group.protocol", "Classic", ""},
		{Consumer, "3.7", "group.protocol", "share", "one of CONSUMER, CLASSIC (case-insensitive)"},
		// AutoOffsetResetStrategy (4.0): by_duration with an ISO-8601 duration.
		{Consumer, "4.1", "auto.offset.reset", "earliest", ""},
		{Consumer, "4.1", "auto.offset.reset", "by_duration:PT1H", ""},
		{Consumer, "4.1", "auto.offset.reset", "by_duration:P1DT2H3M4.5S", ""},
		{Consumer, "4.1", "auto.offset.reset", "by_duration:", "not a valid value"},
		{Consumer, "4.1", "auto.offset.reset", "by_duration:-PT1H", "not a valid value"},
		{Consumer, "4.1", "auto.offset.reset", "Earliest", "not a valid value"},
		{Consumer, "3.9", "auto.offset.reset", "by_duration:PT1H", "not a valid value"},
		// string with NonEmptyString.
		{Producer, "3.9", "transactional.id", "tx-1", ""},
		{Producer, "3.9", "transactional.id", "  ", "empty; allowed: a non-empty string"},
		// list with ValidList: each item checked, "" is the empty list.
		{Topic, "3.9", "cleanup.policy", "compact,delete", ""},
		{Topic, "3.9", "cleanup.policy", " compact , delete ", ""},
		{Topic, "3.9", "cleanup.policy", "", ""},
		{Topic, "3.9", "cleanup.policy", "compact,,delete", `item "" is not a valid value`},
		{Topic, "3.9", "cleanup.policy", "compact,Delete", `item "Delete" is not a valid value; allowed: a comma-separated list, each item one of compact, delete`},
		{Broker, "3.9", "process.roles", "broker,controller", ""},
		{Broker, "3.9", "process.roles", "voter", "each item one of broker, controller"},
		// list without validator or with a custom one: any list.
		{Producer, "3.9", "bootstrap.servers", "a:9092, b:9092", ""},
		{Broker, "3.9", "controller.quorum.voters", "", ""}, // "non-empty list" accepts the empty list (QuorumConfig)
		// class: a Java class name, not loaded.
		{Producer, "3.9", "key.serializer", "org.apache.kafka.common.serialization.StringSerializer", ""},
		{Producer, "3.9", "key.serializer", "a.b.Outer$Inner", ""},
		{Producer, "3.9", "key.serializer", "not a class", "not a Java class name"},
		{Producer, "3.9", "key.serializer", "org..Foo", "not a Java class name"},
		// password: anything.
		{Producer, "3.9", "ssl.key.password", " any thing ", ""},
		// int with a custom validator: the type only, the rendering quoted.
		{Topic, "3.9", "compression.gzip.level", "5", ""},
		{Topic, "3.9", "compression.gzip.level", "50", ""},
		{Topic, "3.9", "compression.gzip.level", "five", `not an int; allowed: an int in [-2147483648, 2147483647] (Kafka also applies the validator "[1,...,9] or -1", not checked here)`},
	} {
		d := lookup(t, c.kind, c.release, c.name)
		err := d.Check(c.value)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s %s %s Check(%q) = %v, want nil", c.release, c.kind, c.name, c.value, err)
		case c.wantErr != "" && err == nil:
			t.Errorf("%s %s %s Check(%q) = nil, want an error with %q", c.release, c.kind, c.name, c.value, c.wantErr)
		case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
			t.Errorf("%s %s %s Check(%q) = %q, want it to contain %q", c.release, c.kind, c.name, c.value, err, c.wantErr)
		}
	}
}

func TestCheckErrorFields(t *testing.T) {
	err := lookup(t, Topic, "3.9", "max.message.bytes").Check(" abc ")
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("Check error %T, want *CheckError", err)
	}
	want := CheckError{Name: "max.message.bytes", Value: " abc ", Reason: "not an int", Allowed: "an int in [0, 2147483647]"}
	if *ce != want {
		t.Errorf("CheckError = %+v, want %+v", *ce, want)
	}
}

// TestEveryDefaultChecks: Kafka validates each default against its
// validator (ConfigKey's constructor), so every non-null default in the
// tables must pass Check.
func TestEveryDefaultChecks(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		for _, d := range defs[k] {
			if d.NoDefault {
				continue
			}
			if err := d.Check(d.Default); err != nil {
				t.Errorf("%s %s..%s default: %v", k, releaseNames[d.From], releaseNames[d.To], err)
			}
		}
	}
}

func TestParseRange(t *testing.T) {
	for s, want := range map[string]valueRange{
		"[1,...]":          {hasMin: true, min: 1, minText: "1"},
		"[...,10]":         {hasMax: true, max: 10, maxText: "10"},
		"[0,...,1]":        {hasMin: true, min: 0, minText: "0", hasMax: true, max: 1, maxText: "1"},
		"[0.5,...,1.0]":    {hasMin: true, min: 0.5, minText: "0.5", hasMax: true, max: 1, maxText: "1.0"},
		"[-131072,...,22]": {hasMin: true, min: -131072, minText: "-131072", hasMax: true, max: 22, maxText: "22"},
		"[...]":            {},
	} {
		got, ok := parseRange(s)
		if !ok || got != want {
			t.Errorf("parseRange(%q) = %+v, %v; want %+v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "[compact, delete]", "[1,...,9] or -1", "[partitionId]:[brokerId],[partitionId]:[brokerId],...", "non-empty list"} {
		if r, ok := parseRange(s); ok {
			t.Errorf("parseRange(%q) = %+v, want no range", s, r)
		}
	}
}

func TestJavaSyntax(t *testing.T) {
	for s, want := range map[string]bool{
		"PT1H": true, "pt1h": true, "P1D": true, "P1DT2H": true, "PT0.5S": true, "PT1,5S": true, "+PT1M": true,
		"P": false, "PT": false, "P1DT": false, "-PT1H": false, "PT-1H": false, "P1H": false, "PT1.5H": false,
		"PT1S1H": false, "1H": false, "PT0.1234567891S": false, "": false,
	} {
		if got := isDuration(s); got != want {
			t.Errorf("isDuration(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{
		"1": true, "-1.5": true, "+.5": true, "1.": true, "1e3": true, "1E-3": true, "2d": true, "2.5F": true,
		"NaN": true, "-Infinity": true, "1.7976931348623157E308": true,
		".": false, "e3": false, "1e": false, "1.2.3": false, "0x1p3": false, "inf": false, "nan": false, "1_0": false, "": false,
	} {
		if got := isJavaDouble(s); got != want {
			t.Errorf("isJavaDouble(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{
		"a.b.C": true, "C": true, "a.B$Inner": true, "_x.y2": true, "é.Ü": true,
		"": false, "a..b": false, ".a": false, "a.": false, "2a.b": false, "a.b-c": false, "a b": false,
	} {
		if got := isClassName(s); got != want {
			t.Errorf("isClassName(%q) = %v, want %v", s, got, want)
		}
	}
	if got := javaTrim("\x00\t x y \x1f\n"); got != "x y" {
		t.Errorf("javaTrim = %q, want \"x y\"", got)
	}
}
