// DeliveryAckClock: when a receiver's cumulative delivery ack goes out (delivery_ack_clock.hpp).
// No libfabric here; staged_send_connection_test.cpp runs it on real connections.
#include "backends/hw/libfabric/delivery_ack_clock.hpp"

#include <catch2/catch.hpp>

using namespace railcheck;
using railcheck::fabric::DeliveryAckClock;
using railcheck::fabric::DeliveryAckTiming;

TEST_CASE("without staging every delivery is acknowledged at once", "[fabric][acks]") {
  DeliveryAckClock c(DeliveryAckTiming{0, 8, us(250)});
  CHECK_FALSE(c.due(0, us(0)));
  c.landed(64);
  CHECK(c.due(1, us(0)));
}

TEST_CASE("staged-size deliveries wait for a count or a delay, whichever comes first", "[fabric][acks]") {
  DeliveryAckClock c(DeliveryAckTiming{131072, 8, us(250)});
  c.landed(64);
  CHECK_FALSE(c.due(1, us(1000)));  // the clock starts at the first question
  CHECK_FALSE(c.due(1, us(1249)));
  CHECK(c.due(1, us(1250)));
  c.sent();
  // The count: the eighth waiting message makes it due at once.
  for (int i = 0; i < 7; ++i) c.landed(4096);
  CHECK_FALSE(c.due(7, us(2000)));
  c.landed(4096);
  CHECK(c.due(8, us(2001)));
  c.sent();
  // After an ack the delay starts again from the next owed message, not from the last ack.
  c.landed(64);
  CHECK_FALSE(c.due(1, us(5000)));
  CHECK_FALSE(c.due(1, us(5200)));
  CHECK(c.due(1, us(5250)));
}

TEST_CASE("a delivery larger than the staging limit is acknowledged at once: its send waits", "[fabric][acks]") {
  DeliveryAckClock c(DeliveryAckTiming{131072, 8, us(250)});
  c.landed(64);
  CHECK_FALSE(c.due(1, us(0)));
  c.landed(131073);
  CHECK(c.due(2, us(1)));
  c.sent();
  c.landed(131072);  // at the limit: staged by the sender, so lazy
  CHECK_FALSE(c.due(1, us(2)));
}

TEST_CASE("a closing connection's owed ack is due at once", "[fabric][acks]") {
  DeliveryAckClock c(DeliveryAckTiming{131072, 8, us(250)});
  c.landed(64);
  CHECK_FALSE(c.due(1, us(0)));
  c.owe_now();
  CHECK(c.due(1, us(1)));
  c.sent();
  CHECK_FALSE(c.due(0, us(2)));  // nothing owed: owing "now" is not a reason to send
}

TEST_CASE("nothing owed is never due, and owing nothing resets the delay", "[fabric][acks]") {
  DeliveryAckClock c(DeliveryAckTiming{131072, 8, us(250)});
  c.landed(64);
  CHECK_FALSE(c.due(1, us(0)));
  CHECK_FALSE(c.due(0, us(10000)));  // acknowledged by another way (a failover's resync)
  CHECK_FALSE(c.due(1, us(10100)));  // a fresh wait, from here
  CHECK_FALSE(c.due(1, us(10349)));
  CHECK(c.due(1, us(10350)));
}
