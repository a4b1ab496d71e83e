module github.com/kafkasim/kafkasim

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
