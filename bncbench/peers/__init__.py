"""Reference implementations run as peers (oracles in tests, rivals in benchmarks): Weka, ...

Each module runs one external program on the same integer codes and reads back what it computed.
"""
