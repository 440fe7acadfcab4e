module arena/bot

go 1.24.0

require (
	github.com/golang/protobuf v1.5.2
	golang.org/x/net v0.7.0
	golang.org/x/sys v0.3.0
	golang.org/x/text v0.7.0
	google.golang.org/genproto v0.0.0-20200413000000-b5235f6
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
