"""The mesh: peers swap session files so one agent can recall what another did (DESIGN §8).

Each node serves the sessions it owns; every other node pulls what is new or grown into
``<vault>/peers/<node>/``. Modules: ``config`` (identity, swarm key, peers), ``crypto``
(the sealed envelope), ``redact`` (secrets out before a file leaves), ``files`` (manifests,
and writing what is received — safely), ``server`` and ``client`` (HTTP on 127.0.0.1 by
default), ``gitsync`` (the same layout through any git remote), ``discovery`` (mDNS, extra
``chrollo[lan]``). The crypto needs the extra ``chrollo[mesh]`` (``cryptography``).
"""
