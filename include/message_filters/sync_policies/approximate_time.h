// message_filters/sync_policies/approximate_time.h is not provided by takt yet: docs/ros1.md ("message_filters") lists what
// is (Subscriber, TimeSynchronizer, Synchronizer with the ExactTime policy, Cache, PassThrough).
#error "takt: message_filters/sync_policies/approximate_time.h is not provided yet; docs/ros1.md, \"message_filters\", lists what is"
