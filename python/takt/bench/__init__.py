"""The benchmarks behind `takt bench NAME`: one module per benchmark, the helpers they share in
takt.bench.common, and the name -> module table in takt.bench.registry."""
