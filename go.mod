module github.com/global-stability/global_stability_exporter

go 1.26.8

require (
	github.com/alecthomas/kingpin/v2 v2.4.0
	github.com/prometheus/common v0.73.1
)

require (
	github.com/alecthomas/units v0.0.0-20240927000941-0f3dac36c52b // indirect
	github.com/xhit/go-str2duration/v2 v2.1.0 // indirect
)
