package main

// This file is each subcommand's help (kafkasim CMD -help, -h): a
// synopsis, what the command is for, every flag, the exit codes and two
// examples, on stdout, exit 0.

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// commandDoc is one subcommand's help text.
type commandDoc struct {
	synopsis string
	purpose  string // what it is for: paragraphs, wrapped by hand
	exits    string // one line per code
	examples []string
}

// runExits are the exit codes of run, replay and serve: the one rule.
const runExits = harness.ExitRule

var docs = map[string]commandDoc{
	"list": {
		synopsis: "kafkasim list",
		purpose: `Lists the built-in scenarios (the scripts and the swarm): for each, what it
shows, the sources it follows (KIPs, JIRAs, Kafka's documentation) and its
variants. Use the names with -scenario.`,
		exits:    "0  listed\n2  bad input (an argument)",
		examples: []string{"kafkasim list", "kafkasim list | grep -A1 kip101"},
	},
	"run": {
		synopsis: "kafkasim run -scenario NAME|FILE [-variant V] [-seed N | -choices FILE] [-set key=value ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-json] [-trace] [-export DIR] [-report DIR] [-history FILE]",
		purpose: `Runs a scenario once per variant (or the one -variant names) and prints each
checker's verdict with its evidence, the run's protocol and configuration,
and on a violation the command that replays it. -set overrides a property
(what the variant sets, too: the header names the override); without
-variant, variants that -set makes identical run once. -choices FILE
replays a saved choice list; with -variant naming another variant than the
file's, the same schedule runs under it where its choices still fit (the
header says "schedule from variant hw, run under kip101"; the trace hash is
not checked), and a choice that does not fit is bad input naming it.`,
		exits: runExits,
		examples: []string{"kafkasim run -scenario kip101-hw-lag",
			"kafkasim run -scenario kip101-hw-lag -variant kip101 -choices explore-kip101-hw-lag-hw.choices -json"},
	},
	"replay": {
		synopsis: "kafkasim replay -scenario NAME|FILE [-variant V] [-seed N | -choices FILE] [-set key=value ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-all] [-export DIR] [-report DIR]\n       kafkasim replay -tape FILE [-all] [-report DIR] [-history FILE]",
		purpose: `Re-runs a seed (or a saved choice list) and prints the trace as a timeline:
every transition the brokers logged, every client outcome (acknowledged,
refused with its error, unknown) and, after each event that changed them,
every replica's role, epoch, LEO, HW and ISR; then the verdicts as run
prints them. -all adds every message and timer. -choices FILE -variant
OTHER replays the file's schedule under another variant of its scenario
(as run does): exit 2 when a choice does not fit, e.g. "choice 23: recorded
order:0/4, variant kip279 asks order:?/2 — the schedule does not fit this
variant". -tape FILE reruns a run served by kafkasim serve -tape FILE: the
tape names its scenario, variant, seed and -set, and holds every
connection, request and live command with the event and virtual time it
was applied at, so the brokers' side runs again, without the clients, to
the same trace hash the served run printed.`,
		exits: runExits,
		examples: []string{"kafkasim replay -scenario kip101-hw-lag -variant hw -seed 1",
			"kafkasim replay -scenario swarm -variant hw-unsafe -choices shrunk-swarm-hw-unsafe.choices -report out/"},
	},
	"serve": {
		synopsis: "kafkasim serve [-scenario NAME|FILE] [-variant V] [-seed N] [-set key=value ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-listen HOST:PORT] [-speed X] [-faults PROFILE] [-tape FILE] [-report DIR] [-history FILE]",
		purpose: `Serves a simulated cluster to real Kafka clients: broker bN listens on
HOST:PORT+N and speaks Kafka's wire protocol at the versions the simulated
release supports, with virtual time paced to the wall clock (-speed 10:
ten times faster). Without -scenario it serves 3 brokers and topic t (3
partitions, RF 3, min.insync.replicas=2); a scenario's steps run at their
virtual times (a script can crash the leader at 30s). It prints a line per
listener, then "ready" once every partition has a leader, then reads live
commands on standard input, one per line, each answered with a line:
crash bN, restart bN, power-loss bN, shutdown bN, pause bN DUR,
partition A,B | C, cut A -> B, heal, restart-all, crash-leader TOPIC/P,
status (every partition's leader, epoch, ISR and HW, the faults so far),
stop. -faults PROFILE injects the swarm's faults while the clients run, on
a schedule drawn from the seed: from "ready" until stop, a draw every
fault-every of virtual time (2s by default) may crash, power off, pause
or partition a random broker, heal, or restart a broker it took down
(PROFILE: default, failover or network, and/or KEY=VALUE words: crash=P
power-loss=P pause=P partition=P heal=P fault-every=DUR restart=P
profile=fixed|swarm). Each fault is printed as it is injected ("fault
12.040s: crash b1 (leader of t/0)"), and at stop how many of each. At
stop (or SIGINT, SIGTERM) the checkers judge what the brokers saw — every
produce and its answer, every fetch and the records it returned — and the
verdicts are printed as run prints them, with run's exit codes. The inputs are
recorded on a tape (-tape FILE, by default a temporary file named on
stderr) so that kafkasim replay -tape FILE reruns the server's side; a
tape, -history or -report that cannot be written is reported after the
verdicts, with exit 2.`,
		exits: runExits,
		examples: []string{"kafkasim serve -tape served.tape",
			"kafkasim serve -set inter.broker.protocol.version=4.1 -listen 127.0.0.1:19092 -speed 10 -faults 'default fault-every=5s' -report out/"},
	},
	"suite": {
		synopsis: "kafkasim suite [-seeds N] [-run REGEXP] [-parallel P] [-set key=value ...] [-strict] [-junit FILE] [-json] [-budget DUR] [-report DIR] [-progress MODE] [-ext EXT] [-shard i/n] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [PATH ...]",
		purpose: `Runs scenarios under each variant over N seeds and prints a table: how many
seeds showed what the scenario expects, the acknowledged records, the loss
rate and each checker's worst verdict. A case whose runs could not be
carried out says RUN FAILED. Without PATH: the built-in scenarios. With
PATHs: your scripts, each PATH a script file or a directory searched
recursively for *.txt (-ext: another extension; names starting with '.'
are skipped). A case is named by the script's path relative to its PATH,
without the extension (a file PATH: its base name); -run matches
"case/variant". Every script is parsed and every variant's configuration
checked before anything runs: all problems are listed (file:line), exit 2.
-shard i/n runs every n-th case from the i-th (cases in name order, then
variant order); each shard can write its own -junit file. Flags may follow
the PATHs; after -- every argument is a PATH.`,
		exits: "Each run is judged by run's rule; a run whose exit would be 0 or 3 passes:\n" + harness.ExitRule + "\nThe suite exits 0 when every run passed, 1 when some run did not (1 or 4\nabove), 2 on bad input (a flag, a missing path, a directory without\nscripts, any script's parse error, a variant's refused configuration, a\nshard with nothing to run): nothing runs.",
		examples: []string{"kafkasim suite -run 'kip101|kip279' -seeds 20 -junit suite.xml",
			"kafkasim suite -shard 0/4 -junit kafkasim-0.xml -report kafkasim-reports scenarios/"},
	},
	"check": {
		synopsis: "kafkasim check -history FILE [-format kafkasim|jepsen] [-json] [-budget DUR] [-ww-deps=false]",
		purpose: `Runs the checkers on a history saved by 'kafkasim run -history FILE', or
recorded by Jepsen's Kafka workload (-format jepsen), and prints the
verdicts as run does.`,
		exits:    "By run's rule, with no expect lines (a Jepsen history: any anomaly exits 1,\nas Jepsen's :valid? false):\n0  every verdict ok, permitted by Kafka's contract, or not judged\n1  a verdict breaks Kafka's contract (-strict: a permitted one too)\n2  bad input (the line and what was expected)\n3  a checker could only say unknown",
		examples: []string{"kafkasim check -history run.jsonl", "kafkasim check -format jepsen -history checkers/jepsen/testdata/lost-write.edn -json"},
	},
	"bench": {
		synopsis: "kafkasim bench [-count N] [-run REGEXP] [-json | -baseline FILE [-current FILE]]",
		purpose: `Measures the standard workloads in one process: a bare event loop beside the
kernel's ping-pong (both with 64 events in flight), Cluster60s on ZooKeeper
and KRaft, a swarm run, a consumer-group swarm, an exhaustive exploration
and the checkers on a 10,000-send history. For each: wall time per run,
simulated-to-wall speedup, events (or explored runs) per second,
allocations and bytes per record, and the peak heap, with the machine it
ran on. -json keeps each run's figures as well as the means.

-baseline FILE compares this run with an earlier -json output (several
appended to one file are pooled) as benchstat does: per figure, the median
of the runs ± its 90% confidence interval on each side, and the change
with a Mann-Whitney U test's p (~ where it finds no difference). A
workload on one side only is listed as such. JSON without per-run figures
(kafkasim before issue 31) counts as one run of its means. With -current
FILE it compares two saved outputs and measures nothing: on a loaded
machine, alternate 'bench -json -count 1' of the two builds into two files
and compare those.`,
		exits:    "0  measured (or compared)\n1  a workload failed\n2  bad input (a -baseline or -current FILE missing, unreadable or not bench -json output)",
		examples: []string{"kafkasim bench -count 5 -json > base.json", "kafkasim bench -count 5 -run 'cluster|swarm' -baseline base.json"},
	},
	"kernel": {
		synopsis: "kafkasim kernel [-seeds N] [-seed S] [-nodes K] [-trace]",
		purpose: `Checks the simulation kernel's determinism: runs its chaos workload three
times per seed (recorded, again from the seed, replayed from the recorded
choices) and compares the trace hashes.`,
		exits:    "0  every seed's hashes agree\n1  some seed's do not\n2  bad input",
		examples: []string{"kafkasim kernel", "kafkasim kernel -seeds 100 -nodes 7"},
	},
	"mutants": {
		synopsis: "kafkasim mutants [-mutant NAME|LAYER,...] [-seeds N] [-shrink-runs N] [-explore-runs N] [-parallel P] [-shard i/n] -out DIR [-budget DUR] [-progress MODE] | kafkasim mutants -list",
		purpose: `Measures the checkers' detection power. Each mutant is a planted bug, not
Kafka (switched on anywhere with -set kafkasim.mutant.NAME=true); for each
selected one this runs the scenarios that can reach it with the bug on,
seeds 1..N, and the same scenarios without any bug (the control). A seed
detects a mutant when a checker finds a contract break (never a violation
Kafka's contract permits) or the run fails. Then it shrinks each first
detection and explores the model checker's small clusters with the bug on.
Writes mutants.csv, mutants.json, mutants.md, detection.png/.svg (the
fraction of mutants found against seeds) and runs.jsonl into DIR;
rerunning the same command resumes, -shard splits it across machines and
'kafkasim merge' joins the shards. -list prints the catalogue.`,
		exits: "0    every mutant measured was detected and the control is clean\n1    a mutant went undetected, or the control broke Kafka's contract\n2    bad input\n130  interrupted (rerun to resume)",
		examples: []string{"kafkasim mutants -seeds 100 -out out/mutants",
			"kafkasim mutants -mutant raft,fsync-lies -seeds 20 -shrink-runs 0 -explore-runs 0 -out out/ci-mutants"},
	},
	"sweep": {
		synopsis: "kafkasim sweep -scenario NAME|FILE [-variant V] -grid key=v1,v2 ... [-set key=value ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-seeds N] [-parallel P] [-shard i/n] -out DIR [-budget DUR] [-progress MODE]",
		purpose: `Runs a scenario over a grid of configurations × seeds and writes CSV, JSON,
one record per run, and plots of data loss with confidence intervals into
DIR; rerunning the same command resumes. -shard splits the space across
machines; 'kafkasim merge' joins the shards.`,
		exits: "0    the sweep ran (its results are data, not a verdict)\n1    an output could not be written\n2    bad input\n130  interrupted (rerun to resume)",
		examples: []string{"kafkasim sweep -scenario acks1-leader-crash -grid '$acks=1,all' -seeds 50 -out out/acks",
			"kafkasim sweep -scenario swarm -grid 'variant=kip279-safe,hw-unsafe' -grid '$crash=0.1,0.3' -shard 0/4 -out shard-0"},
	},
	"matrix": {
		synopsis: "kafkasim matrix [-scenario NAME|FILE ...] [-variant [SCENARIO=]V ...] [-versions LIST] [-set key=value ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-seeds N] [-parallel P] [-shard i/n] [-progress MODE] -out DIR [-budget DUR]",
		purpose: `Runs each scenario's workload under each Kafka release, N seeds per cell,
and prints the table "which Kafka loses what"; writes matrix.csv,
matrix.json, matrix.md, a heat map (matrix.png/.svg) and runs.jsonl (each
run's replay command) into DIR. -scenario takes names and script files,
repeated or as a comma list.

Each row runs one variant of its scenario: the one -variant names
(SCENARIO=V for one scenario; V alone for every scenario that has a variant
V, the others keeping their first, with a note), else its first. Every
output says what each row ran: "variant unclean
(unclean.leader.election.enable=true)" — the variant, its settings, and
the -config files' and -set's (CSV columns variant, variant_from,
settings, replaced_by_release).

Precedence, lowest first: the release's defaults, the script's set lines,
the variant, the -config files, -set, and the column's release, which sets
the version-selecting properties (inter.broker.protocol.version,
truncation, process.roles, kafkasim.leader.epoch.fencing,
consumer.kafkasim.truncation.detection, log.message.format.version,
kafkasim.raft.prevote, metadata.version) over everything; -set of one of
them is refused (choose releases with -versions), a -config file's is
reported as overridden.

Labels: X.Y (ZooKeeper below 4.0), 3.9-zk, 3.9-kraft (process.roles=broker,
dedicated controllers), 4.0, 4.1, 4.2, 4.3 (KRaft), and patch releases such as
4.0.0 (KAFKA-19522, KAFKA-19367), 4.0.1 or 3.9.0-kraft; 4.0 alone is
4.0.1, the newest 4.0 patch modelled. A cell that cannot run on its release
(a 'controller manual' script on KRaft) is n/a with why. Without -scenario:
kip101-hw-lag, kip101-power-loss, kip279-fast-failover,
consumer-truncation, kafka3410-halt, last-replica-standing (when this build
has it) and swarm. -shard splits the runs; 'kafkasim merge' joins matrix
shards as it joins sweep shards. Rerunning the same command resumes.`,
		exits: "By run's rule over every run of the matrix (a release's configuration is\nnever the variant's own, so the scripts' expect lines do not apply):\n" + harness.ExitRule + "\n1    also: an output could not be written\n2    also: an unknown variant (naming the allowed ones), a -set of a key the release decides\n130  interrupted (rerun to resume)",
		examples: []string{"kafkasim matrix -seeds 5 -parallel 2 -out out/matrix",
			"kafkasim matrix -scenario unclean-election,kip101-power-loss -variant unclean-election=clean -set log.flush.interval.messages=1 -versions 0.10.2,2.0,4.1 -seeds 2 -out m"},
	},
	"merge": {
		synopsis: "kafkasim merge -out DIR SHARD_DIR...",
		purpose:  `Joins the outputs of a sharded sweep into the files one unsharded sweep writes.`,
		exits:    "0  merged\n1  a file could not be written\n2  bad input (missing, duplicate or mismatched shards)",
		examples: []string{"kafkasim merge -out merged shard-0 shard-1 shard-2 shard-3", "kafkasim merge -out /out/merged /out/shard-*"},
	},
	"explore": {
		synopsis: "kafkasim explore -scenario NAME|FILE [-variant V] [-set k=v ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-depth D] [-records N] [-faults LIST] [-checkers LIST] [-acks all|1|0] [-max-runs N] [-parallel P] [-state FILE] [-orders] [-dfs] [-save FILE] [-script FILE] [-progress MODE]",
		purpose: `Model-checks the real broker code on a scenario's cluster: every sequence
of actions (produce, crash, power-loss, restart, elect, partition ...) up
to -depth, each run from the start with a prefix of choices, visited states
pruned. Prints the first violation as a step list and saves its choices.
-script FILE also writes it as a scenario script: the faults, produces and
controller decisions as steps at their virtual times, with the scenario's
variants, so 'kafkasim run -scenario FILE -variant kip279' asks whether
another variant survives it. The order of simultaneous events and where
within an instant an action fell are not expressed (the script says so).
On a KRaft cluster (controllers N, process.roles, 4.0+) the real quorum
controller runs; the actions are next, produce, crash/power-loss/restart of
controllers and brokers, cut/heal between voters (default -faults
crash,partition; -checkers raft,acked-loss,divergence), e.g. -set
kafkasim.raft.vote.check.log=false -depth 4 -records 1.`,
		exits: "0  no violation within the bound (or within -max-runs)\n1  a violation (its choices are saved)\n2  bad input",
		examples: []string{"kafkasim explore -scenario kip101-hw-lag -variant hw -depth 9 -faults crash,elect",
			"kafkasim explore -scenario kip101-hw-lag -variant hw -depth 8 -checkers acked-loss -script hw-loss.txt; kafkasim run -scenario hw-loss.txt -variant kip279"},
	},
	"shrink": {
		synopsis: "kafkasim shrink -scenario NAME|FILE [-variant V] (-seed N | -choices FILE) [-set k=v ...] [-config FILE ...] [-producer-config FILE ...] [-consumer-config FILE ...] [-checker NAME] [-max-runs N] [-save FILE] [-script FILE] [-progress MODE]",
		purpose: `Reduces a failing run (a seed, or a choice file from explore or an earlier
shrink) to a few steps: sets its choices back to the default chunk by
chunk, keeping each change under which the same checker still fails; prints
the steps, saves the choices and the replay command. -choices FILE
-variant OTHER shrinks the file's schedule under another variant (where
its choices fit). -script FILE writes the shrunk run as a scenario script
(for a choice file of an explored run, as explore -script does).`,
		exits: "0  shrunk\n1  the choice file could not be written\n2  bad input (including a run that fails no checker: nothing to shrink)",
		examples: []string{"kafkasim shrink -scenario swarm -variant hw-unsafe -seed 7",
			"kafkasim shrink -scenario kip101-hw-lag -choices explore-kip101-hw-lag-hw.choices -save short.choices -script short.txt"},
	},
}

// helpRequest is -h or -help on a subcommand's flags: main prints the
// command's help on stdout and exits 0.
type helpRequest struct{ fs *flag.FlagSet }

func (helpRequest) Error() string { return "help requested" }
func (helpRequest) Unwrap() error { return flag.ErrHelp }

// writeHelp prints a command's help: synopsis, purpose, flags, exit codes,
// examples.
func writeHelp(w io.Writer, name string, fs *flag.FlagSet) {
	d, ok := docs[name]
	if !ok {
		d = commandDoc{synopsis: "kafkasim " + name + " [flags]", purpose: commands[name].summary}
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", d.synopsis, d.purpose)
	if fs != nil {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			out := fs.Output()
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(out)
		}
	}
	if d.exits != "" {
		fmt.Fprintf(w, "\nexit codes:\n%s\n", indent(d.exits, "  "))
	}
	if len(d.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range d.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}
