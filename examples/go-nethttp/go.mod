module clientbench.example/go-nethttp

go 1.24.0

require github.com/HdrHistogram/hdrhistogram-go v1.4.0
