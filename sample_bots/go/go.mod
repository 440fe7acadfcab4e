module arena/go-sample

go 1.24.0
