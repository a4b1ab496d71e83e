// Package metadata holds KRaft's metadata records, their serialization as
// Kafka's MetadataRecordSerde writes them (so that kafka-dump-log
// --cluster-metadata-decoder could read a kafkasim metadata log), and the
// metadata image that the controller and every broker build by replaying
// the committed records of __cluster_metadata.
//
//	img := metadata.NewImage()
//	for _, b := range batch.Records {
//		r, err := metadata.Decode(b)
//		...
//		err = img.Replay(r)
//	}
//	p, ok := img.Partition("orders", 0) // leader, ISR, epochs
package metadata
