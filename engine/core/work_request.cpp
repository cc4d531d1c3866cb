#include "engine/core/work_request.hpp"

namespace railcheck {

std::string_view to_string(WcStatus s) {
  switch (s) {
    case WcStatus::Success: return "SUCCESS";
    case WcStatus::LocLenErr: return "LOC_LEN_ERR";
    case WcStatus::LocQpOpErr: return "LOC_QP_OP_ERR";
    case WcStatus::LocProtErr: return "LOC_PROT_ERR";
    case WcStatus::WrFlushErr: return "WR_FLUSH_ERR";
    case WcStatus::RemAccessErr: return "REM_ACCESS_ERR";
    case WcStatus::RemOpErr: return "REM_OP_ERR";
    case WcStatus::RetryExcErr: return "RETRY_EXC_ERR";
    case WcStatus::RnrRetryExcErr: return "RNR_RETRY_EXC_ERR";
    case WcStatus::GeneralErr: return "GENERAL_ERR";
  }
  return "?";
}

std::string_view to_string(WrOpcode op) {
  switch (op) {
    case WrOpcode::Send: return "SEND";
    case WrOpcode::Recv: return "RECV";
    case WrOpcode::Write: return "WRITE";
    case WrOpcode::WriteImm: return "WRITE_IMM";
  }
  return "?";
}

std::string_view to_string(QpState s) {
  switch (s) {
    case QpState::Reset: return "RESET";
    case QpState::Init: return "INIT";
    case QpState::Rtr: return "RTR";
    case QpState::Rts: return "RTS";
    case QpState::Sqd: return "SQD";
    case QpState::Sqe: return "SQE";
    case QpState::Err: return "ERR";
  }
  return "?";
}

}  // namespace railcheck
