// SPDX-License-Identifier: Apache-2.0
// Template sets (RFC 7011 §3.4.1) and the type information of enterprise
// elements (RFC 5610 §3): an options template scoped by element id and
// enterprise number, and one data record per element, so that a collector
// decodes gnio's elements without being configured for them.
#include "gnio/ipfix.hpp"

namespace gnio::ipfix {

namespace {

constexpr uint16_t kEnterpriseBit = 0x8000;
// IANA elements of RFC 5610.
constexpr uint16_t kInformationElementId = 303;
constexpr uint16_t kPrivateEnterpriseNumber = 346;
constexpr uint16_t kInformationElementDataType = 339;
constexpr uint16_t kInformationElementSemantics = 344;
constexpr uint16_t kInformationElementName = 341;
constexpr uint16_t kInformationElementUnits = 345;
constexpr uint16_t kInformationElementRangeBegin = 342;
constexpr uint16_t kInformationElementRangeEnd = 343;
constexpr uint16_t kInformationElementDescription = 340;

void write_field(MessageWriter& w, const Field& f) {
  w.u16(static_cast<uint16_t>(f.id | (f.enterprise != 0 ? kEnterpriseBit : 0)));
  w.u16(f.length);
  if (f.enterprise != 0) w.u32(f.enterprise);
}

}  // namespace

void write_templates(MessageWriter& w, std::span<const Template> templates) {
  w.begin_set(kTemplateSetId);
  for (const Template& t : templates) {
    w.u16(t.id);
    w.u16(static_cast<uint16_t>(t.fields.size()));
    for (const Field& f : t.fields) write_field(w, f);
  }
}

Template type_information_template(uint16_t template_id) {
  return {template_id,
          {{kPrivateEnterpriseNumber, 4, 0},
           {kInformationElementId, 2, 0},
           {kInformationElementDataType, 1, 0},
           {kInformationElementSemantics, 1, 0},
           {kInformationElementUnits, 2, 0},
           {kInformationElementRangeBegin, 8, 0},
           {kInformationElementRangeEnd, 8, 0},
           {kInformationElementName, kVariableLength, 0},
           {kInformationElementDescription, kVariableLength, 0}}};
}

void write_type_information(MessageWriter& w, uint16_t template_id, std::span<const ElementInfo> elements) {
  const Template t = type_information_template(template_id);
  w.begin_set(kOptionsTemplateSetId);
  w.u16(t.id);
  w.u16(static_cast<uint16_t>(t.fields.size()));
  w.u16(2);  // scope fields: enterprise number and element id
  for (const Field& f : t.fields) write_field(w, f);
  w.begin_set(template_id);
  for (const ElementInfo& e : elements) {
    w.u32(e.enterprise);
    w.u16(e.id);
    w.u8(static_cast<uint8_t>(e.type));
    w.u8(static_cast<uint8_t>(e.semantics));
    w.u16(0);  // units: none
    w.u64(0);  // no range
    w.u64(0);
    w.varlen(e.name);
    w.varlen(e.description);
  }
}

}  // namespace gnio::ipfix
