// Command kfake serves franz-go's fake cluster (pkg/kfake) on the ports
// kafkasim serve uses, with serve's start and stop protocol, so that the
// client suites of serve/clienttests run against it unchanged: the
// baseline the served cluster is compared with.
//
// It prints one "bN listening on ADDR" line per broker and then "ready",
// and stops on a "stop" line on standard input, at EOF, or on SIGINT or
// SIGTERM. It is its own module so that kafkasim's go.mod does not take
// kfake's dependencies; franz-go runs kfake the same way (kfake's
// main.go, "go run main.go", with group.consumer.heartbeat.interval.ms=1000
// in its run_tests.sh).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

// configFlags collects the repeatable -c key=value broker configs.
type configFlags map[string]string

func (f configFlags) String() string { return "" }

func (f configFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q: want key=value", s)
	}
	f[k] = v
	return nil
}

func main() {
	listen := flag.Int("port", 9092, "port of b0; broker bN listens on PORT+N of 127.0.0.1")
	brokers := flag.Int("brokers", 3, "number of brokers")
	asVersion := flag.String("as-version", "", "Kafka release whose API versions kfake advertises (e.g. 3.9, 4.1; default: all kfake knows)")
	autoCreate := flag.Bool("auto-create", false, "auto.create.topics.enable: Metadata creates the topics it names")
	configs := configFlags{}
	flag.Var(configs, "c", "broker config key=value (repeatable)")
	flag.Parse()

	ports := make([]int, *brokers)
	for i := range ports {
		ports[i] = *listen + i
	}
	opts := []kfake.Opt{kfake.Ports(ports...), kfake.SeedTopics(-1, "foo")}
	if *asVersion != "" {
		v := kversion.FromString(*asVersion)
		if v == nil {
			fmt.Fprintf(os.Stderr, "kfake: -as-version %q: not a release kversion knows; known: %v\n", *asVersion, kversion.VersionStrings())
			os.Exit(2)
		}
		opts = append(opts, kfake.MaxVersions(v))
	}
	if *autoCreate {
		opts = append(opts, kfake.AllowAutoTopicCreation())
	}
	if len(configs) > 0 {
		opts = append(opts, kfake.BrokerConfigs(configs))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: %v\n", err)
		os.Exit(1)
	}
	for i, a := range c.ListenAddrs() {
		fmt.Printf("b%d listening on %s\n", i, a)
	}
	fmt.Println("ready")

	stop := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "stop" {
				break
			}
			fmt.Println("kfake: the only command is stop")
		}
		stop <- "stop"
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	select {
	case <-stop:
	case s := <-sigs:
		fmt.Println("signal " + s.String())
	}
	fmt.Println("stopping")
	c.Close()
	fmt.Printf("kfake stopped: %d brokers, no verdicts (kfake judges nothing)\n", len(ports))
}
