// Test only: VS Code answers every chat request with "Language model unavailable" unless a
// default model exists (a vendor "copilot" model marked default, which needs the chatProvider
// proposal: code-server runs with --enable-proposed-api livenote-e2e.fake-lm). The participant
// under test (@livenote) never uses it: its answer comes from livenote's own model.
const vscode = require('vscode');

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('copilot', {
      provideLanguageModelChatInformation: () => [
        {
          id: 'scripted',
          name: 'Scripted',
          family: 'scripted',
          version: '1',
          maxInputTokens: 100000,
          maxOutputTokens: 1000,
          capabilities: {},
          isDefault: true,
          isUserSelectable: true,
        },
      ],
      provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
        progress.report(new vscode.LanguageModelTextPart('(scripted)'));
      },
      provideTokenCount: async () => 1,
    }),
  );
};
