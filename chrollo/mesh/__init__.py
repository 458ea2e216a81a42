"""The mesh: paired nodes swap session files so one agent can recall what another did (docs/design.md §8).

Trust layer (knows no transport): ``identity`` (key pair, certificate, node ID = fingerprint),
``config`` (this node's name, paired peers and their switches), ``manifests`` (signed manifests
with sequence numbers; publish, verify, pull into ``<vault>/peers/<name>/``), ``seal``
(encryption for shared media), ``files`` (bounded, link-free reads and writes); redaction is
``chrollo.redact``. Transports (move bytes only): ``folder`` (any synced folder), ``gitsync``
(any git remote), ``server`` + ``client`` (TLS 1.3 with mutual auth), ``discovery`` (mDNS);
``sync`` runs one of them.
"""
