// librdkafka's in-memory mock broker as a process of its own (bench peer, compiled by
// bench/peers.ts): one mock broker on a 127.0.0.1 port the kernel picks, which it prints as
// host:port on its first line; it serves until its stdin closes. Run apart from the producer,
// its CPU (utime+stime from /proc) is what a C broker that keeps records in memory spends per
// message on this machine, beside the broker's figure for the same client and load.
// Build: cc -O2 -Wall -o mock_broker mock_broker.c -lrdkafka
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);  // no warning that it has no bootstrap.servers
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) { fprintf(stderr, "rd_kafka_new: %s\n", err); return 1; }
  rd_kafka_mock_cluster_t *mock = rd_kafka_mock_cluster_new(rk, 1);
  if (!mock) { fprintf(stderr, "rd_kafka_mock_cluster_new failed\n"); return 1; }
  printf("%s\n", rd_kafka_mock_cluster_bootstraps(mock));
  fflush(stdout);
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {}  // until the bench closes our stdin (or exits)
  rd_kafka_mock_cluster_destroy(mock);
  rd_kafka_destroy(rk);
  return 0;
}
