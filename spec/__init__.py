"""Executable specification of RocketMQ's HA protocols.

Pure functions over frozen attrs records: no clock, no randomness, no I/O.
Everything else in rmqha (reference nodes, adapters, conformance, z3 proofs)
calls these definitions instead of restating them.
"""
