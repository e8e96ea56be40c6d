// message_filters' NullType: the unused message types of a synchronizer of fewer than nine inputs.
#ifndef TAKT_MESSAGE_FILTERS_NULL_TYPES_H
#define TAKT_MESSAGE_FILTERS_NULL_TYPES_H

#include <memory>

namespace message_filters {

struct NullType {};
typedef std::shared_ptr<NullType const> NullTypeConstPtr;

}  // namespace message_filters

#endif
