package kraft

// This file serves BrokerRegistrationRequest (api key 62) as Kafka 4.0's
// ClusterControlManager.registerBroker: the new broker epoch is the offset
// the RegisterBrokerRecord is written at; a new broker (or a new
// incarnation) starts fenced; the same incarnation registering again keeps
// its epoch and its fenced / controlled-shutdown state; another
// incarnation while the old one still has a live session gets
// DUPLICATE_BROKER_REGISTRATION.
//
// KIP-966 (ELR on): a new incarnation of a registered broker whose
// PreviousBrokerEpoch (the epoch its clean-shutdown file kept, else -1) is
// not the epoch it had shut down uncleanly: before its RegisterBrokerRecord
// the controller writes the changes that take it out of every ISR and ELR
// and bar it from leading (handleBrokerUncleanShutdown), since its log may
// have lost what those lists promise; a clean one leaves the ISRs as a
// fenced broker does (handleBrokerShutdown).
//
// Simplified: with ELR off the re-registration of a new incarnation
// writes no partition changes (Kafka's handleBrokerShutdown removes it
// from the ISRs then too; here its fencing does). Features are written as
// the broker sent them (plus metadata.version at its minimum when missing)
// and not checked against the finalized levels; log dirs are not required
// or checked.

import (
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// minKRaftMetadataVersion is MetadataVersion.MINIMUM_KRAFT_VERSION (3.0-IV1).
const minKRaftMetadataVersion int16 = 1

func (c *Controller) brokerRegistration(ctx *sim.Context, req *kmsg.BrokerRegistrationRequest, reply func(kmsg.Response)) {
	resp := req.ResponseKind().(*kmsg.BrokerRegistrationResponse)
	fail := func(e *kerr.Error) {
		resp.ErrorCode = e.Code
		reply(resp)
	}
	if c.cfg.ClusterID != "" && req.ClusterID != c.cfg.ClusterID {
		fail(kerr.InconsistentClusterID)
		return
	}
	if req.IsMigratingZkBroker {
		fail(kerr.BrokerIDNotRegistered)
		return
	}
	id := req.BrokerID
	existing, had := c.working.img.Broker(id)
	if had && existing.IncarnationID != req.IncarnationID && c.validSession(ctx, id) {
		fail(kerr.DuplicateBrokerRegistration)
		return
	}
	rec := &metadata.RegisterBrokerRecord{BrokerID: id, IncarnationID: req.IncarnationID, LogDirs: req.LogDirs}
	if req.Rack != nil {
		rec.Rack = *req.Rack
	}
	for _, l := range req.Listeners {
		rec.EndPoints = append(rec.EndPoints, metadata.BrokerEndpoint{Name: l.Name, Host: l.Host, Port: l.Port, SecurityProtocol: l.SecurityProtocol})
	}
	hasMV := false
	for _, f := range req.Features {
		rec.Features = append(rec.Features, metadata.BrokerFeature{Name: f.Name, MinSupportedVersion: f.MinSupportedVersion, MaxSupportedVersion: f.MaxSupportedVersion})
		hasMV = hasMV || f.Name == metadata.MetadataVersionFeature
	}
	if !hasMV {
		rec.Features = append(rec.Features, metadata.BrokerFeature{Name: metadata.MetadataVersionFeature, MinSupportedVersion: minKRaftMetadataVersion, MaxSupportedVersion: minKRaftMetadataVersion})
	}
	newIncarnation := !had || existing.IncarnationID != req.IncarnationID
	var recs []metadata.Record
	if had && newIncarnation && c.cfg.ELR {
		// Mutant elr-keeps-unclean-replica: every shutdown is taken for a
		// clean one, so the broker keeps its place in the ELRs.
		clean := req.PreviousBrokerEpoch == existing.Epoch || c.cfg.Mutants.On(mutant.ELRKeepsUncleanReplica)
		recs = c.brokerShutdownRecords(ctx, id, clean)
	}
	if newIncarnation {
		rec.BrokerEpoch = c.nextWrite
		rec.Fenced = true
	} else {
		rec.BrokerEpoch = existing.Epoch
		rec.Fenced = existing.Fenced
		rec.InControlledShutdown = existing.InControlledShutdown
	}
	c.previousEpochs[id] = req.PreviousBrokerEpoch
	// heartbeatManager.remove + register: a fresh session.
	c.sessions[id] = &session{lastContact: ctx.Now(), fenced: rec.Fenced, metadataOffset: -1, shutdownOffset: -1}
	if !newIncarnation {
		if s := c.sessions[id]; rec.InControlledShutdown {
			s.shutdownOffset = c.nextWrite
		}
	}
	c.armFenceTimer(ctx)
	epoch := rec.BrokerEpoch
	c.write(ctx, append(recs, rec), func() {
		ctx.Log("broker-registered", sim.I("broker", int64(id)), sim.I("epoch", epoch))
		resp.BrokerEpoch = epoch
		reply(resp)
	}, fail)
}

// brokerShutdownRecords are the partition changes for a broker that
// registers again after a shutdown (ReplicationControlManager.
// handleBrokerShutdown): unclean, it leaves every ISR and ELR; clean, it
// leaves the ISRs as if fenced (and stays in the ELRs it is in).
func (c *Controller) brokerShutdownRecords(ctx *sim.Context, id int32, clean bool) []metadata.Record {
	if clean {
		parts := c.partitionsWith(func(p metadata.PartitionState) bool { return contains(p.ISR, id) })
		return c.leaderAndISRUpdates(ctx, id, -1, parts, "clean-shutdown")
	}
	ctx.Log("broker-unclean-shutdown", sim.I("broker", int64(id)))
	parts := c.partitionsWith(func(p metadata.PartitionState) bool { return contains(p.ISR, id) || contains(p.ELR, id) })
	return c.generateLeaderAndISRUpdates(ctx, -1, -1, id, parts, "unclean-shutdown")
}
