"""Other people's learners run as peers on the same codes: :mod:`bncbench.peers.gigal` (the authors' KDB and
selective KDB in C++)."""
