// message_filters' Connection over takt: what registerCallback returns; disconnect() removes the
// callback (once; a copy's disconnect does the same, nothing once the filter has gone).
#ifndef TAKT_MESSAGE_FILTERS_CONNECTION_H
#define TAKT_MESSAGE_FILTERS_CONNECTION_H

#include <functional>
#include <utility>

namespace message_filters {

class Connection {
 public:
  Connection() = default;
  explicit Connection(std::function<void()> disconnect) : disconnect_(std::move(disconnect)) {}
  void disconnect() {
    if (disconnect_) disconnect_();
    disconnect_ = nullptr;
  }

 private:
  std::function<void()> disconnect_;
};

}  // namespace message_filters

#endif
