module github.com/throttlekit/throttle/examples/vegeta-adaptive

go 1.26.0

require (
	github.com/throttlekit/throttle v0.0.0
	github.com/throttlekit/throttle/adapters/vegeta v0.0.0
	github.com/tsenart/vegeta/v12 v12.13.0
)

require (
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529 // indirect
	golang.org/x/net v0.63.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace (
	github.com/throttlekit/throttle => ../..
	github.com/throttlekit/throttle/adapters/vegeta => ../../adapters/vegeta
)
