"""RIP-44 controller: metadata, events, APIs, elect policy, liveness, profiles.

* records.py     metadata (SyncStateInfo, BrokerReplicaInfo, ControllerMetadata), requests,
                 responses, ResponseCode
* events.py      ApplyBrokerId / UpdateBrokerAddress / ElectMaster / AlterSyncStateSet /
                 CleanBrokerData events and ``apply_event``
* codec.py       events (and other records) <-> small JSON-able dicts
* api.py         the APIs as ordered rule tables: ``(metadata, request, liveness) -> result``
* elect_policy.py  DefaultElectPolicy
* heartbeat.py   heartbeat table, liveness, expiry scan
* scheduling.py  controller-side elections and periodic re-elect
* profiles.py    ``rocketmq-5.1`` (default) and ``rocketmq-5.0``
* rules.py       the procedures bundled with a profile and a config (mutants swap fields)
"""
