package backend_test

func childWorker() int { return 2 }
