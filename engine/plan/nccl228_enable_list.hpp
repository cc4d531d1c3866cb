#pragma once
// NCCL_ALGO and NCCL_PROTO in NCCL 2.28.9's own grammar (src/graph/tuning.cc parseList, called by
// ncclTopoTuneModel), e.g.
//
//     NCCL_ALGO="ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring"
//     NCCL_PROTO="LL,Simple;allreduce:^LL"        NCCL_PROTO="^LL128;allreduce:LL128"
//
// Sections are ';'-separated; each is "[function:]elements", only the first may lack the
// function (it then applies to every function). Elements are ','-separated; a leading '^' turns
// the section into "every element but these". A section sets its functions' whole row: listed
// elements on, the others off (with '^' the other way round), so LL128's default "on where the
// paths allow" becomes a plain on or off once a section names its function. Function and element
// names are case-insensitive (strcasecmp). Empty pieces are skipped (strtok_r), and a section's
// text after a second ':' is ignored. An unknown function or element, or a later section without
// a function, fails NCCL's init (ncclInvalidUsage): here an error naming the variable and text.
#include <string_view>

#include "engine/core/result.hpp"
#include "engine/plan/nccl228_params.hpp"

namespace railcheck::plan {

// `enable`'s proto rows, as NCCL_PROTO=`text` leaves them.
Result<bool> apply_nccl_proto(std::string_view text, AlgoProtoEnable& enable);
// `enable`'s algo rows, as NCCL_ALGO=`text` leaves them.
Result<bool> apply_nccl_algo(std::string_view text, AlgoProtoEnable& enable);

}  // namespace railcheck::plan
