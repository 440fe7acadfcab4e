module arena/go-sample

go 1.19
