package serve

import (
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stopgap until the broker's own table lands.
type fixedVersions map[int16][2]int16

func (v fixedVersions) Range(key int16) (int16, int16, bool) {
	r, ok := v[key]
	return r[0], r[1], ok
}

// VersionsFor returns the api versions brokers of cfg serve.
func VersionsFor(cfg config.Config) Versions {
	return fixedVersions{
		int16(kmsg.Produce): {3, 7}, int16(kmsg.Fetch): {4, 11}, int16(kmsg.ListOffsets): {1, 4},
		int16(kmsg.Metadata): {1, 7}, int16(kmsg.FindCoordinator): {0, 2}, int16(kmsg.InitProducerID): {0, 1},
	}
}
