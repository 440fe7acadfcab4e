"""Bots and seats: manifests, the one place a bot process is started, and the ``Seat`` the match
runner talks to, over a gRPC stream or a program's pipes."""
