// XmlRpc::XmlRpcValue as roscpp code reads parameters with it: a boolean, int, double, string,
// array or struct, nested (NodeHandle::getParam(key, XmlRpcValue&)). Types are as strict as
// XmlRpc++'s: reading a value as another type than its own throws XmlRpcException ("type
// error"), an int is not a double. Not carried over: dateTime and base64 values, toXml/fromXml.
#ifndef TAKT_XMLRPCPP_XMLRPCVALUE_H
#define TAKT_XMLRPCPP_XMLRPCVALUE_H

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "xmlrpcpp/XmlRpcException.h"

namespace XmlRpc {

class XmlRpcValue {
 public:
  enum Type { TypeInvalid, TypeBoolean, TypeInt, TypeDouble, TypeString, TypeDateTime, TypeBase64,
              TypeArray, TypeStruct };
  typedef std::vector<XmlRpcValue> ValueArray;
  typedef std::map<std::string, XmlRpcValue> ValueStruct;
  typedef ValueStruct::iterator iterator;
  typedef ValueStruct::const_iterator const_iterator;

  XmlRpcValue() = default;
  XmlRpcValue(bool v) : type_(TypeBoolean), bool_(v) {}          // NOLINT: implicit, as XmlRpc++'s
  XmlRpcValue(int v) : type_(TypeInt), int_(v) {}                // NOLINT
  XmlRpcValue(double v) : type_(TypeDouble), double_(v) {}       // NOLINT
  XmlRpcValue(const std::string &v) : type_(TypeString), string_(v) {}  // NOLINT
  XmlRpcValue(const char *v) : type_(TypeString), string_(v) {}         // NOLINT

  Type getType() const { return type_; }
  bool valid() const { return type_ != TypeInvalid; }
  void clear() { *this = XmlRpcValue(); }
  /** Elements of an array, members of a struct, characters of a string; a type error (thrown)
   * for any other value, as XmlRpc++'s. */
  int size() const {
    switch (type_) {
    case TypeString: return static_cast<int>(string_.size());
    case TypeArray: return static_cast<int>(array_.size());
    case TypeStruct: return static_cast<int>(struct_.size());
    default: throw XmlRpcException("type error");
    }
  }
  /** Makes this an array of at least n elements (the new ones invalid), as XmlRpc++'s. */
  void setSize(int n) { assertArray(n); }
  bool hasMember(const std::string &name) const {
    return type_ == TypeStruct && struct_.count(name) > 0;
  }

  // arrays: a const read of an element out of range throws; a write makes room (XmlRpc++)
  const XmlRpcValue &operator[](int i) const {
    if (type_ != TypeArray) throw XmlRpcException("type error: expected an array");
    if (i < 0 || i >= static_cast<int>(array_.size())) throw XmlRpcException("index error");
    return array_[static_cast<size_t>(i)];
  }
  XmlRpcValue &operator[](int i) {
    if (i < 0) throw XmlRpcException("index error");
    assertArray(i + 1);
    return array_[static_cast<size_t>(i)];
  }
  // structs: a missing member reads as an invalid value added to the struct (XmlRpc++)
  XmlRpcValue &operator[](const std::string &name) {
    assertStruct();
    return struct_[name];
  }
  XmlRpcValue &operator[](const char *name) { return (*this)[std::string(name)]; }
  /** A missing member of a const struct reads as an invalid value (whose conversions throw). */
  const XmlRpcValue &operator[](const std::string &name) const {
    if (type_ != TypeStruct) throw XmlRpcException("type error: expected a struct");
    auto it = struct_.find(name);
    static const XmlRpcValue none;
    return it == struct_.end() ? none : it->second;
  }
  const XmlRpcValue &operator[](const char *name) const { return (*this)[std::string(name)]; }
  iterator begin() { assertStruct(); return struct_.begin(); }
  iterator end() { assertStruct(); return struct_.end(); }
  const_iterator begin() const { checkType(TypeStruct); return struct_.begin(); }
  const_iterator end() const { checkType(TypeStruct); return struct_.end(); }

  // values of their own type (an invalid value takes the type asked, as XmlRpc++'s)
  operator bool &() { return ref(TypeBoolean, bool_); }
  operator int &() { return ref(TypeInt, int_); }
  operator double &() { return ref(TypeDouble, double_); }
  operator std::string &() { return ref(TypeString, string_); }
  operator const bool &() const { checkType(TypeBoolean); return bool_; }
  operator const int &() const { checkType(TypeInt); return int_; }
  operator const double &() const { checkType(TypeDouble); return double_; }
  operator const std::string &() const { checkType(TypeString); return string_; }

  bool operator==(const XmlRpcValue &o) const {
    if (type_ != o.type_) return false;
    switch (type_) {
    case TypeInvalid: return true;
    case TypeBoolean: return bool_ == o.bool_;
    case TypeInt: return int_ == o.int_;
    case TypeDouble: return double_ == o.double_;
    case TypeString: return string_ == o.string_;
    case TypeArray: return array_ == o.array_;
    case TypeStruct: return struct_ == o.struct_;
    default: return false;
    }
  }
  bool operator!=(const XmlRpcValue &o) const { return !(*this == o); }

  /** As XmlRpc++ prints a value: scalars as they are, arrays {a,b}, structs [k:v,...]. */
  std::ostream &write(std::ostream &os) const {
    switch (type_) {
    case TypeBoolean: return os << bool_;
    case TypeInt: return os << int_;
    case TypeDouble: return os << double_;
    case TypeString: return os << string_;
    case TypeArray: {
      os << '{';
      for (size_t i = 0; i < array_.size(); i++) array_[i].write(i ? os << ',' : os);
      return os << '}';
    }
    case TypeStruct: {
      os << '[';
      bool first = true;
      for (const auto &kv : struct_) {
        if (!first) os << ',';
        first = false;
        kv.second.write(os << kv.first << ':');
      }
      return os << ']';
    }
    default: return os;
    }
  }

 private:
  void checkType(Type t) const {
    if (type_ != t) throw XmlRpcException("type error");
  }
  template <class T>
  T &ref(Type t, T &field) {
    if (type_ == TypeInvalid) type_ = t;
    checkType(t);
    return field;
  }
  void assertArray(int n) {
    if (type_ == TypeInvalid) type_ = TypeArray;
    checkType(TypeArray);
    if (n > static_cast<int>(array_.size())) array_.resize(static_cast<size_t>(n));
  }
  void assertStruct() {
    if (type_ == TypeInvalid) type_ = TypeStruct;
    checkType(TypeStruct);
  }

  Type type_ = TypeInvalid;
  bool bool_ = false;
  int int_ = 0;
  double double_ = 0.0;
  std::string string_;
  ValueArray array_;
  ValueStruct struct_;
};

inline std::ostream &operator<<(std::ostream &os, const XmlRpcValue &v) { return v.write(os); }

}  // namespace XmlRpc

#endif
