"""Reference implementations run as peers on the same codes (oracles in tests, rivals in benchmarks).

:mod:`bncbench.peers.weka` runs Weka's classifiers; :mod:`bncbench.peers.gigal` the authors' KDB and
selective KDB in C++ (Gigal). Each module runs one external program and reads back what it computed.
"""
