// Protobuf schemas and a value the Protobuf tests share: a file with an import, nested messages, an enum, a oneof,
// a map and well-known types.

export const moneyProto = `syntax = "proto3";
package common;

message Money {
  int64 units = 1;
  string currency = 2;
}
`;

export const orderProto = `syntax = "proto3";
package boxoffice;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "common/money.proto";

message Order {
  message Line {
    string sku = 1;
    int32 quantity = 2;
  }
  enum Status {
    STATUS_UNKNOWN = 0;
    CONFIRMED = 1;
    REFUNDED = 2;
  }
  string order_id = 1;
  int64 orderNo = 2;
  repeated Line lines = 3;
  map<string, int32> seats_by_row = 4;
  oneof payment {
    string card = 5;
    int32 cash = 6;
  }
  google.protobuf.Timestamp confirmed_at = 7;
  common.Money total = 8;
  Status status = 9;
  google.protobuf.StringValue coupon = 10;
  bytes signature = 11;
}

message Refund {
  string order_id = 1;
}
`;

/** A value of `boxoffice.Order` as the serde reads it back (64-bit integers as strings, enums by name). */
export const protoOrder = {
  order_id: 'o-1',
  orderNo: '9007199254740993',
  lines: [
    { sku: 'A1', quantity: 2 },
    { sku: 'B4', quantity: 1 },
  ],
  seats_by_row: { A: 2, B: 1 },
  card: 'visa-4242',
  confirmed_at: { seconds: '1796227200', nanos: 5 },
  total: { units: '129', currency: 'EUR' },
  status: 'CONFIRMED',
  coupon: { value: 'XMAS' },
  signature: Buffer.from([1, 2, 3]),
};
