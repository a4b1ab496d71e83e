module github.com/kafkasim/kafkasim

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
	pgregory.net/rapid v1.3.0
)
